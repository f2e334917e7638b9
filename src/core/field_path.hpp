// A field path as a list of segments (issue 44 item 4): `spec.taskRoles[2].selector.commandRegex`
// is {spec} {taskRoles [2]} {selector} {commandRegex}; a map key is a segment's key
// (`node.labels[nvidia.com/gpu.product]`: the dots inside the brackets belong to the key). The
// layers that rename fields (the manifest's names to the proto's, src/api) work on segments, and
// the text is rendered once, where it is shown (gRPC status, REST body, CLI message).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace c2c {

struct FieldSegment {
  std::string name;
  std::optional<size_t> index;       // [2]
  std::optional<std::string> key;    // [zone] (a map key; not all digits)
  bool operator==(const FieldSegment&) const = default;
};

class FieldPath {
 public:
  FieldPath() = default;
  // The rendered form back into segments: names split at dots outside brackets, "[digits]" an
  // index, any other "[...]" a key (up to the last "]" before the next dot outside brackets).
  static FieldPath parse(std::string_view text);

  FieldPath& add(std::string name);          // a segment
  FieldPath& index(size_t i);                // [i] on the last segment
  FieldPath& key(std::string k);             // [k] on the last segment
  FieldPath& append(const FieldPath& tail);  // this, then tail's segments

  const std::vector<FieldSegment>& segments() const { return segs_; }
  std::vector<FieldSegment>& segments() { return segs_; }
  bool empty() const { return segs_.empty(); }
  size_t size() const { return segs_.size(); }
  // True when the first segments are exactly these names (indices and keys on them ignored).
  bool starts_with(std::initializer_list<std::string_view> names) const;
  // The path without its first n segments.
  FieldPath drop_front(size_t n) const;

  // "spec.taskRoles[2].selector.commandRegex"
  std::string str() const;
  bool operator==(const FieldPath&) const = default;

 private:
  std::vector<FieldSegment> segs_;
};

}  // namespace c2c
