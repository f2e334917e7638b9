#include "cli/manifests.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "codec/json_reader.hpp"

namespace c2c::cli {

std::string kind_name(PolicyKind k) { return c2c::to_string(k); }

std::string ref_of(const c2c::AnyPolicy& p) { return kind_name(kind_of(p)) + "/" + name_of(p); }

std::vector<PolicyManifest> decode_policy_manifests(std::string_view text, const std::string& name,
                                                    const YamlLimits& limits) {
  std::vector<nlohmann::json> docs;
  try {
    docs = parse_documents_bounded(text, limits);
  } catch (const YamlError& e) {
    throw ManifestError(name + ": " + e.what());
  }
  // A `kind: List` (what `claim2core get policies -o json` prints) contributes its items.
  struct Doc {
    const nlohmann::json* value;
    std::string where;
  };
  std::vector<Doc> flat;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string where = name + " doc " + std::to_string(i + 1);
    const auto& d = docs[i];
    if (d.is_object() && d.value("kind", nlohmann::json()) == "List") {
      if (!d.contains("items") || !d["items"].is_array()) throw ManifestError(where + ": items: a List needs an items array");
      for (size_t k = 0; k < d["items"].size(); ++k) flat.push_back({&d["items"][k], where + " items[" + std::to_string(k) + "]"});
    } else {
      flat.push_back({&d, where});
    }
  }
  if (flat.empty()) throw ManifestError(name + ": no policy documents");
  std::vector<PolicyManifest> out;
  std::map<std::string, std::string> seen;  // kind/name -> where it was defined
  for (const auto& [value, where] : flat) {
    if (!value->is_object())
      throw ManifestError(where + ": not a mapping (a policy manifest has apiVersion, kind, metadata, spec)");
    try {
      PolicyManifest m{where, codec::decode_policy(*value, "")};
      auto [it, fresh] = seen.emplace(ref_of(m.policy), where);
      if (!fresh)
        throw ManifestError(where + ": metadata.name: " + ref_of(m.policy) + " is already defined in " +
                            it->second.substr(name.size() + 1));
      out.push_back(std::move(m));
    } catch (const codec::DecodeError& e) {
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
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw ManifestError(path + ": is a directory (give the files)");
    std::ifstream file(path, std::ios::binary);
    if (!file) throw ManifestError(path + ": cannot open");
    read_capped(file);
  }
  return decode_policy_manifests(text, path == "-" ? "<stdin>" : path, limits);
}

}  // namespace c2c::cli
