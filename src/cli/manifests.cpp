#include "cli/manifests.hpp"

#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>

#include "trace/json_reader.hpp"

namespace c2c::cli {

PolicyKind kind_of(const trace::AnyPolicy& p) {
  return std::holds_alternative<DraExecutionPolicy>(p) ? PolicyKind::Dra : PolicyKind::Node;
}

const std::string& name_of(const trace::AnyPolicy& p) {
  return std::visit([](const auto& v) -> const std::string& { return v.name; }, p);
}

std::string kind_name(PolicyKind k) { return k == PolicyKind::Dra ? "DRAExecutionPolicy" : "NodeSchedulingPolicy"; }

std::string ref_of(const trace::AnyPolicy& p) { return kind_name(kind_of(p)) + "/" + name_of(p); }

std::vector<PolicyManifest> decode_policy_manifests(std::string_view text, const std::string& name,
                                                    const YamlLimits& limits) {
  std::vector<nlohmann::json> docs;
  try {
    docs = parse_documents_bounded(text, limits);
  } catch (const YamlError& e) {
    throw ManifestError(name + ": " + e.what());
  }
  if (docs.empty()) throw ManifestError(name + ": no policy documents");
  std::vector<PolicyManifest> out;
  std::map<std::string, size_t> seen;  // kind/name -> document number
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string where = name + " doc " + std::to_string(i + 1);
    if (!docs[i].is_object()) throw ManifestError(where + ": not a mapping (a policy manifest has apiVersion, kind, metadata, spec)");
    try {
      PolicyManifest m{where, trace::decode_policy(docs[i], "")};
      auto [it, fresh] = seen.emplace(ref_of(m.policy), i + 1);
      if (!fresh)
        throw ManifestError(where + ": metadata.name: " + ref_of(m.policy) + " is already defined in doc " +
                            std::to_string(it->second));
      out.push_back(std::move(m));
    } catch (const trace::DecodeError& e) {
      throw ManifestError(where + ": " + e.field + ": " + e.what());
    }
  }
  return out;
}

std::vector<PolicyManifest> load_policy_manifests(const std::string& path, const YamlLimits& limits) {
  std::string text;
  auto read_capped = [&](std::istream& in) {
    // Read one byte past the cap so that an oversized file is refused without reading it all.
    text.resize(limits.max_input_bytes + 1);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
  };
  if (path == "-") {
    read_capped(std::cin);
  } else {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw ManifestError(path + ": cannot open");
    read_capped(file);
  }
  return decode_policy_manifests(text, path == "-" ? "<stdin>" : path, limits);
}

}  // namespace c2c::cli
