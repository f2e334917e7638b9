// Strict, path-tracking access to JSON objects: every error names the field it is about
// ("claim.devices[0].cpus"), unknown fields are refused, and types and ranges are checked.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cpuset.hpp"

namespace c2c::codec {

struct DecodeError : std::runtime_error {
  std::string field;
  DecodeError(std::string f, const std::string& message) : std::runtime_error(message), field(std::move(f)) {}
};

class Reader {
 public:
  Reader(const nlohmann::json& j, std::string path);

  const std::string& path() const { return path_; }
  bool has(const char* key) const;
  Reader child(const char* key) const;           // required object member
  std::optional<Reader> opt_child(const char* key) const;
  std::vector<Reader> array(const char* key) const;     // optional, default empty

  std::string str(const char* key) const;                            // required
  std::string str_or(const char* key, const std::string& fallback) const;
  // A name from the host (comm, process title, cgroup path: bytes, core/names.hpp): a string, or
  // {"hex": "<two hex digits a byte>"} for one that is not UTF-8 (spec/trace-format.md).
  std::string name(const char* key) const;                           // required
  std::string name_or(const char* key, const std::string& fallback) const;
  int64_t i64(const char* key) const;                                // required
  int64_t i64_or(const char* key, int64_t fallback) const;
  uint64_t u64(const char* key) const;                               // required, >= 0
  uint64_t u64_or(const char* key, uint64_t fallback) const;
  uint32_t u32(const char* key) const;
  bool boolean_or(const char* key, bool fallback) const;
  std::optional<CpuSet> cpus(const char* key) const;                 // optional kernel list string
  std::map<std::string, std::string> string_map(const char* key) const;
  std::vector<std::string> strings(const char* key) const;
  std::vector<int> ints(const char* key) const;
  // Go/Kubernetes duration ("30s", "500ms", "1m30s") or an integer of nanoseconds.
  uint64_t duration_ns_or(const char* key, uint64_t fallback) const;

  // Refuses any member not in `known` (typos must not be silently ignored).
  void only(std::initializer_list<const char*> known) const;

  const nlohmann::json& raw() const { return j_; }
  [[noreturn]] void fail(const char* key, const std::string& message) const;
  std::string at(const char* key) const;

 private:
  const nlohmann::json& member(const char* key) const;
  const nlohmann::json& j_;
  std::string path_;
};

// The trace form of a name (Reader::name): the string when it is UTF-8, else {"hex": "..."}.
nlohmann::json encode_name(const std::string& bytes);

// json::parse that refuses duplicate object keys (JSON leaves them undefined and nlohmann keeps the
// last one silently): throws DecodeError naming the key's path ("task.comm", "claim.devices[1].pool").
// Syntax errors throw nlohmann::json::exception as json::parse does.
nlohmann::json parse_json_strict(std::string_view text);

// Parses a Go / Kubernetes metav1.Duration string ("1.5s", "1m30s", "500ms", "2h45m", "0") into
// nanoseconds, truncating below 1 ns; nullopt on syntax errors, a negative value or overflow.
std::optional<uint64_t> parse_duration_ns(const std::string& s);
std::string format_duration(uint64_t ns);

}  // namespace c2c::codec
