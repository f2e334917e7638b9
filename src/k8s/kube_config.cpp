#include "k8s/kube_config.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "k8s/decode.hpp"
#include "codec/bounded_yaml.hpp"

namespace c2c::k8s {

using nlohmann::json;

std::optional<std::string> base64_decode(const std::string& in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    int v = value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xffu));
    }
  }
  return out;
}

namespace {

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

std::optional<KubeConfig> fail(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
  return std::nullopt;
}

const json* named(const json& doc, const char* list, const std::string& name, const char* inner) {
  auto it = doc.find(list);
  if (it == doc.end() || !it->is_array()) return nullptr;
  for (const auto& e : *it)
    if (e.is_object() && e.value("name", "") == name && e.contains(inner) && e[inner].is_object()) return &e[inner];
  return nullptr;
}

}  // namespace

std::optional<KubeConfig> in_cluster_config(std::string* error, const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    return fail(error, "not in a cluster: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are unset");
  KubeConfig c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6 literal
  c.server = "https://" + h + ":" + port;
  c.token_file = sa_dir + "/token";
  c.ca_file = sa_dir + "/ca.crt";
  std::string probe;
  if (!read_file(c.token_file, probe)) return fail(error, "cannot read service-account token " + c.token_file);
  if (!std::filesystem::exists(c.ca_file)) return fail(error, "missing service-account CA " + c.ca_file);
  return c;
}

std::optional<KubeConfig> kubeconfig_from_file(const std::string& path, const std::string& context, std::string* error) {
  std::string text;
  if (!read_file(path, text)) return fail(error, "cannot read kubeconfig " + path);
  json doc;
  try {
    auto docs = codec::parse_documents_bounded(text);
    if (docs.empty() || !docs[0].is_object()) return fail(error, path + ": not a kubeconfig");
    doc = docs[0];
  } catch (const std::exception& e) {
    return fail(error, path + ": " + e.what());
  }
  std::string ctx_name = context.empty() ? doc.value("current-context", "") : context;
  if (ctx_name.empty()) return fail(error, path + ": no current-context and no --context");
  const json* ctx = named(doc, "contexts", ctx_name, "context");
  if (!ctx) return fail(error, path + ": context " + ctx_name + " not found");
  std::string cluster_name = ctx->value("cluster", ""), user_name = ctx->value("user", "");
  const json* cluster = named(doc, "clusters", cluster_name, "cluster");
  if (!cluster) return fail(error, path + ": cluster " + cluster_name + " not found");
  std::filesystem::path base = std::filesystem::path(path).parent_path();
  auto resolve = [&](const std::string& p) {
    if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (base / p).string();
  };
  KubeConfig c;
  c.server = cluster->value("server", "");
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (c.server.empty()) return fail(error, path + ": clusters[" + cluster_name + "].cluster.server is empty");
  c.ca_file = resolve(cluster->value("certificate-authority", ""));
  if (auto d = cluster->value("certificate-authority-data", ""); !d.empty()) {
    auto pem = base64_decode(d);
    if (!pem) return fail(error, path + ": certificate-authority-data is not base64");
    c.ca_data = *pem;
  }
  c.insecure_skip_tls_verify = cluster->value("insecure-skip-tls-verify", false);
  if (const json* user = named(doc, "users", user_name, "user")) {
    if (user->contains("exec") || user->contains("auth-provider"))
      return fail(error, path + ": user " + user_name + " uses an exec/auth-provider plugin, which is not supported; use a token or client certificate");
    c.token = user->value("token", "");
    c.token_file = resolve(user->value("tokenFile", ""));
    c.client_cert_file = resolve(user->value("client-certificate", ""));
    c.client_key_file = resolve(user->value("client-key", ""));
    for (auto [key, dst] : {std::pair{"client-certificate-data", &c.client_cert_data},
                            std::pair{"client-key-data", &c.client_key_data}}) {
      if (auto d = user->value(key, ""); !d.empty()) {
        auto pem = base64_decode(d);
        if (!pem) return fail(error, path + ": " + key + " is not base64");
        *dst = *pem;
      }
    }
  } else if (!user_name.empty()) {
    return fail(error, path + ": user " + user_name + " not found");
  }
  return c;
}

std::optional<KubeConfig> resolve_kube_config(const std::string& kubeconfig, const std::string& context,
                                              const std::string& server, bool home_default, std::string* error) {
  std::optional<KubeConfig> cfg;
  std::string home_config = std::getenv("HOME") ? std::string(std::getenv("HOME")) + "/.kube/config" : "";
  if (!kubeconfig.empty()) cfg = kubeconfig_from_file(kubeconfig, context, error);
  else if (!server.empty()) cfg = KubeConfig{};
  else if (home_default && !home_config.empty() && std::filesystem::exists(home_config))
    cfg = kubeconfig_from_file(home_config, context, error);
  else cfg = in_cluster_config(error);
  if (cfg && !server.empty()) cfg->server = server;
  return cfg;
}

}  // namespace c2c::k8s
