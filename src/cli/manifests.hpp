// Policy files for `apply -f`, `delete -f` and `preview -f`: Kubernetes-style manifests
// (scheduling.gthulhu.io/v1alpha1 DRAExecutionPolicy / NodeSchedulingPolicy), one or many
// documents, YAML or JSON. Every policy is decoded and validated by the same code the core uses
// before anything is sent, so an invalid file changes nothing on the daemon.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "codec/bounded_yaml.hpp"
#include "codec/policy_codec.hpp"

namespace c2c::cli {

using codec::YamlError;
using codec::YamlLimits;
using codec::parse_documents_bounded;

struct PolicyManifest {
  std::string source;   // "vllm.yaml doc 1": where it came from, for messages
  c2c::AnyPolicy policy;
};

// "vllm.yaml doc 1: spec.commandRegex: invalid RE2 regex ...": the file, the document
// (numbered from 1) and the field.
struct ManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Decodes every document of `text`; `name` is how the file is named in errors.
std::vector<PolicyManifest> decode_policy_manifests(std::string_view text, const std::string& name,
                                                    const YamlLimits& limits = {});
// Reads `path` ("-": standard input) and decodes it; errors name the path.
std::vector<PolicyManifest> load_policy_manifests(const std::string& path, const YamlLimits& limits = {});

using c2c::kind_of;  // a policy's identity is the core's (core/model.hpp)
using c2c::name_of;
// "NodeSchedulingPolicy/vllm-enginecore", as the daemon names policies.
std::string ref_of(const c2c::AnyPolicy& p);
std::string kind_name(PolicyKind k);

}  // namespace c2c::cli
