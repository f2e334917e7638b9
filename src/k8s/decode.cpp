// Dispatch of decoded documents to the typed decoders, Lists, files and directories.
#include "k8s/decode.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "k8s/api_version.hpp"
#include "codec/bounded_yaml.hpp"
#include "k8s/json_fields.hpp"

namespace c2c::k8s {

using nlohmann::json;

std::string DecodeIssue::to_string() const {
  std::string s = source;
  if (!object.empty()) s += ": " + object;
  if (!field.empty()) s += ": field " + field;
  return s + ": " + message;
}

void Decoded::append(Decoded&& o) {
  auto move_all = [](auto& dst, auto& src) {
    dst.insert(dst.end(), std::make_move_iterator(src.begin()), std::make_move_iterator(src.end()));
  };
  move_all(claims, o.claims);
  move_all(slices, o.slices);
  move_all(pods, o.pods);
  move_all(classes, o.classes);
  move_all(refused, o.refused);
  move_all(skipped, o.skipped);
}

namespace fields {

ObjectMeta meta(const json& obj) {
  ObjectMeta m;
  const json& md = object(obj, "metadata", "");
  m.name = string(md, "name", "metadata");
  m.namespace_ = string(md, "namespace", "metadata");
  m.uid = string(md, "uid", "metadata");
  m.resource_version = string(md, "resourceVersion", "metadata");
  m.generation = integer(md, "generation", "metadata");
  m.labels = string_map(md, "labels", "metadata");
  m.deleting = find(md, "deletionTimestamp") != nullptr;
  return m;
}

namespace {
std::vector<NodeSelectorRequirement> requirements(const json& term, const char* key, const std::string& path) {
  std::vector<NodeSelectorRequirement> out;
  const json& a = array(term, key, path);
  for (size_t i = 0; i < a.size(); ++i) {
    std::string p = index(join(path, key), i);
    NodeSelectorRequirement r;
    r.key = string(a[i], "key", p);
    r.op = string(a[i], "operator", p);
    r.values = strings(a[i], "values", p);
    if (r.key.empty()) throw FieldError(join(p, "key"), "is required");
    out.push_back(std::move(r));
  }
  return out;
}
}  // namespace

NodeSelector node_selector(const json& sel, const std::string& path) {
  if (!sel.is_object()) throw FieldError(path, "must be an object");
  NodeSelector ns;
  const json& terms = array(sel, "nodeSelectorTerms", path);
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string p = index(join(path, "nodeSelectorTerms"), i);
    NodeSelectorTerm t;
    t.match_expressions = requirements(terms[i], "matchExpressions", p);
    t.match_fields = requirements(terms[i], "matchFields", p);
    ns.terms.push_back(std::move(t));
  }
  return ns;
}

}  // namespace fields

namespace {

std::string describe(const json& obj) {
  std::string kind = obj.is_object() && obj.contains("kind") && obj["kind"].is_string() ? obj["kind"].get<std::string>() : "object";
  std::string name, ns;
  if (obj.is_object() && obj.contains("metadata") && obj["metadata"].is_object()) {
    const json& md = obj["metadata"];
    if (md.contains("name") && md["name"].is_string()) name = md["name"].get<std::string>();
    if (md.contains("namespace") && md["namespace"].is_string()) ns = md["namespace"].get<std::string>();
  }
  if (name.empty()) return kind;
  return kind + " " + (ns.empty() ? name : ns + "/" + name);
}

template <typename T, typename F>
void decode_into(const json& obj, const std::string& source, std::vector<T>& dst, Decoded& out, F decoder) {
  try {
    T v = decoder(obj);
    v.origin.source = source;
    dst.push_back(std::move(v));
  } catch (const FieldError& e) {
    out.refused.push_back({source, describe(obj), e.field, e.what()});
  }
}

}  // namespace

void decode_object(const json& obj, const std::string& source, Decoded& out) {
  if (obj.is_null()) return;  // empty document (a lone "---")
  if (!obj.is_object()) {
    out.refused.push_back({source, "", "", std::string("document is a ") + obj.type_name() + ", not an object"});
    return;
  }
  std::string api_version, kind;
  try {
    api_version = fields::string(obj, "apiVersion", "");
    kind = fields::string(obj, "kind", "");
  } catch (const FieldError& e) {
    out.refused.push_back({source, describe(obj), e.field, e.what()});
    return;
  }
  // kubectl prints "kind: List" for mixed lists and "<Kind>List" for a single resource.
  if (kind == "List" || (kind.size() > 4 && kind.ends_with("List") && obj.contains("items"))) {
    const json* items = fields::find(obj, "items");
    if (!items || !items->is_array()) {
      out.refused.push_back({source, kind, "items", "a List must have an items list"});
      return;
    }
    std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
    for (size_t i = 0; i < items->size(); ++i) {
      json item = (*items)[i];
      // Items of a typed list returned by the API server may omit apiVersion/kind.
      if (item.is_object() && !item_kind.empty()) {
        if (!item.contains("kind")) item["kind"] = item_kind;
        if (!item.contains("apiVersion")) item["apiVersion"] = api_version;
      }
      decode_object(item, source + ".items[" + std::to_string(i) + "]", out);
    }
    return;
  }
  if (kind.empty() || api_version.empty()) {
    out.refused.push_back({source, describe(obj), kind.empty() ? "kind" : "apiVersion", "is required"});
    return;
  }
  if (is_resource_group(api_version)) {
    ApiVersionInfo info = classify_resource_api(api_version);
    if (info.api == ResourceApi::Refused) {
      out.refused.push_back({source, describe(obj), "apiVersion", info.refusal});
      return;
    }
    if (kind == "ResourceClaim") return decode_into(obj, source, out.claims, out, decode_resource_claim);
    if (kind == "ResourceSlice") return decode_into(obj, source, out.slices, out, decode_resource_slice);
    if (kind == "DeviceClass") return decode_into(obj, source, out.classes, out, decode_device_class);
    if (kind == "ResourceClaimTemplate") {
      out.skipped.push_back({source, describe(obj), "", "a template: bindings use the ResourceClaims generated from it"});
      return;
    }
    out.skipped.push_back({source, describe(obj), "", "kind " + kind + " is not used for bindings"});
    return;
  }
  if (api_version == "v1" && kind == "Pod") return decode_into(obj, source, out.pods, out, decode_pod);
  out.skipped.push_back({source, describe(obj), "", "kind " + kind + " (" + api_version + ") is not used for bindings"});
}

Decoded decode_text(std::string_view text, const std::string& source) {
  Decoded out;
  std::vector<json> docs;
  try {
    docs = codec::parse_documents_bounded(text);  // kubectl output is untrusted input (yaml-cpp can hang)
  } catch (const std::exception& e) {
    out.refused.push_back({source, "", "", e.what()});
    return out;
  }
  for (size_t i = 0; i < docs.size(); ++i) decode_object(docs[i], source + "#" + std::to_string(i), out);
  return out;
}

namespace {

// Helm templates are not YAML; reading one as YAML could silently produce half an object.
bool looks_like_template(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (line.find("{{") != std::string::npos) return true;
  }
  return false;
}

Decoded decode_file(const std::filesystem::path& p) {
  Decoded out;
  std::string source = p.filename().string();
  std::string ext = p.extension().string();
  if (ext != ".yaml" && ext != ".yml" && ext != ".json") {
    out.skipped.push_back({source, "", "", "not a Kubernetes object file (expected .yaml, .yml or .json)"});
    return out;
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    out.refused.push_back({source, "", "", "cannot read " + p.string()});
    return out;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (looks_like_template(text)) {
    out.refused.push_back({source, "", "", "a Helm template ({{ ... }}), not YAML: render it with `helm template` first"});
    return out;
  }
  return decode_text(text, source);
}

}  // namespace

Decoded decode_path(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    if (!std::filesystem::exists(path, ec)) {
      Decoded out;
      out.refused.push_back({path.string(), "", "", "no such file or directory"});
      return out;
    }
    return decode_file(path);
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(path, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  Decoded out;
  for (const auto& f : files) out.append(decode_file(f));
  return out;
}

}  // namespace c2c::k8s
