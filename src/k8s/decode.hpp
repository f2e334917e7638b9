// Decoding of kubectl output (-o yaml / -o json): single objects, Lists and multi-document files.
// A malformed object is refused with an error naming the object and the field; the rest of the
// batch is still decoded.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "k8s/claim.hpp"
#include "k8s/pod.hpp"
#include "k8s/slice.hpp"

namespace c2c::k8s {

// One object that was not decoded: refused (malformed, unsupported version, not YAML) or
// skipped (a kind that bindings do not use, e.g. Namespace or Deployment).
struct DecodeIssue {
  std::string source;  // "<file>#<doc>" or "<file>#<doc>.items[<i>]"
  std::string object;  // "ResourceClaim dra-tutorial/some-gpu" (as far as known)
  std::string field;   // offending field path, e.g. "spec.devices.requests[0]"
  std::string message;
  std::string to_string() const;
};

struct Decoded {
  std::vector<ResourceClaim> claims;
  std::vector<ResourceSlice> slices;
  std::vector<Pod> pods;
  std::vector<DeviceClass> classes;
  std::vector<DecodeIssue> refused;
  std::vector<DecodeIssue> skipped;
  void append(Decoded&& other);
};

// Field errors inside a decoder; caught per object.
struct FieldError : std::runtime_error {
  std::string field;
  FieldError(std::string f, const std::string& msg) : std::runtime_error(msg), field(std::move(f)) {}
};

// Decodes one object (or a List of them) into `out`.
void decode_object(const nlohmann::json& obj, const std::string& source, Decoded& out);
Decoded decode_text(std::string_view text, const std::string& source);
// A file, or every regular file of a directory (sorted by name, not recursive).
Decoded decode_path(const std::filesystem::path& path);

// Typed decoders; they throw FieldError. `api_version` selects the conversion.
ResourceClaim decode_resource_claim(const nlohmann::json& obj);
ResourceSlice decode_resource_slice(const nlohmann::json& obj);
Pod decode_pod(const nlohmann::json& obj);
DeviceClass decode_device_class(const nlohmann::json& obj);

}  // namespace c2c::k8s
