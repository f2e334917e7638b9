// Parsing untrusted YAML with bounds. yaml-cpp 0.7's LoadAll does not return on some malformed
// inputs (fuzz/findings/yaml-cpp-loadall-hang.yaml), and aliases can expand a small file into a
// huge tree. A thread stuck inside yaml-cpp cannot be stopped, so the parse runs in a forked child
// with a CPU-time and address-space limit, and the parent gives up after a wall-clock deadline.
// Call it before the process starts threads (the CLI parses manifests before it opens a channel).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace c2c::codec {

struct YamlLimits {
  size_t max_input_bytes = 1 << 20;                // a policy file is a few KiB
  std::chrono::milliseconds deadline{3000};         // wall clock for the whole parse
  size_t max_memory_bytes = size_t{512} << 20;      // the child's address space
  size_t max_output_bytes = size_t{16} << 20;       // JSON the child may send back
};

// Thrown for every refusal: too large, a syntax error (with the line), the deadline, a crash.
struct YamlError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Text to JSON documents (JSON when the text is JSON, else YAML 1.2 core schema, as
// codec::parse_documents). Empty documents (a trailing "---") are dropped.
std::vector<nlohmann::json> parse_documents_bounded(std::string_view text, const YamlLimits& limits = {});

}  // namespace c2c::codec
