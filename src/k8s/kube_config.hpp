// How to reach the API server: in-cluster service account or a kubeconfig file.
#pragma once

#include <optional>
#include <string>

namespace c2c::k8s {

struct KubeConfig {
  std::string server;         // https://host:port (no trailing slash)
  std::string ca_file;        // PEM file, or
  std::string ca_data;        // PEM bytes (certificate-authority-data, decoded)
  bool insecure_skip_tls_verify = false;
  std::string token;          // bearer token, or
  std::string token_file;     // re-read on every request (service-account tokens rotate)
  std::string client_cert_file, client_cert_data;
  std::string client_key_file, client_key_data;
};

// KUBERNETES_SERVICE_HOST/PORT and <sa_dir>/{token,ca.crt}. nullopt with *error when not in a pod.
std::optional<KubeConfig> in_cluster_config(std::string* error,
                                            const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// A kubeconfig (YAML); `context` empty means current-context. Relative file paths are resolved
// against the kubeconfig's directory. exec/auth-provider plugins are refused with a message.
std::optional<KubeConfig> kubeconfig_from_file(const std::string& path, const std::string& context, std::string* error);

// The usual order: `kubeconfig` (a file) if given; else `server` alone (no credentials) if given;
// else $HOME/.kube/config when `home_default` and it exists; else in-cluster. `server`, when given,
// also overrides the chosen config's server.
std::optional<KubeConfig> resolve_kube_config(const std::string& kubeconfig, const std::string& context,
                                              const std::string& server, bool home_default, std::string* error);

std::optional<std::string> base64_decode(const std::string& in);

}  // namespace c2c::k8s
