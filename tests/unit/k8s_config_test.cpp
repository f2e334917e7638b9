// Kubeconfig and in-cluster configuration.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "k8s/kube_config.hpp"

namespace c2c::k8s {
namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/c2c-k8s-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

TEST(K8sConfig, Base64) {
  EXPECT_EQ(base64_decode("aGVsbG8gd29ybGQ="), "hello world");
  EXPECT_EQ(base64_decode("aGVs\nbG8="), "hello");
  EXPECT_EQ(base64_decode("not*base64"), std::nullopt);
}

TEST(K8sConfig, KubeconfigCurrentContextWithDataAndRelativeFiles) {
  TempDir d;
  std::string path = d.write("config", R"(
apiVersion: v1
kind: Config
current-context: kind-kind
clusters:
- name: other
  cluster: {server: "https://other:6443"}
- name: kind-kind
  cluster:
    server: https://127.0.0.1:38211/
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t
contexts:
- name: kind-kind
  context: {cluster: kind-kind, user: kind-kind}
- name: certs
  context: {cluster: other, user: certs}
users:
- name: kind-kind
  user: {token: abc.def}
- name: certs
  user: {client-certificate: pki/client.crt, client-key-data: a2V5}
)");
  std::string err;
  auto c = kubeconfig_from_file(path, "", &err);
  ASSERT_TRUE(c) << err;
  EXPECT_EQ(c->server, "https://127.0.0.1:38211");
  EXPECT_EQ(c->ca_data, "-----BEGIN CERTIFICATE-----");
  EXPECT_EQ(c->token, "abc.def");
  auto certs = kubeconfig_from_file(path, "certs", &err);
  ASSERT_TRUE(certs) << err;
  EXPECT_EQ(certs->server, "https://other:6443");
  EXPECT_EQ(certs->client_cert_file, (d.path / "pki/client.crt").string());
  EXPECT_EQ(certs->client_key_data, "key");
  EXPECT_FALSE(kubeconfig_from_file(path, "missing", &err));
  EXPECT_NE(err.find("context missing not found"), std::string::npos) << err;
}

TEST(K8sConfig, ExecPluginsAreRefusedWithAMessage) {
  TempDir d;
  std::string path = d.write("config", R"(
current-context: eks
clusters: [{name: c, cluster: {server: "https://x"}}]
contexts: [{name: eks, context: {cluster: c, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
)");
  std::string err;
  EXPECT_FALSE(kubeconfig_from_file(path, "", &err));
  EXPECT_NE(err.find("exec/auth-provider plugin, which is not supported"), std::string::npos) << err;
}

TEST(K8sConfig, InClusterNeedsEnvironmentTokenAndCa) {
  TempDir d;
  std::string err;
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_FALSE(in_cluster_config(&err, d.path.string()));
  EXPECT_NE(err.find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  EXPECT_FALSE(in_cluster_config(&err, d.path.string()));
  EXPECT_NE(err.find("token"), std::string::npos) << err;
  d.write("token", "t0k\n");
  d.write("ca.crt", "pem");
  auto c = in_cluster_config(&err, d.path.string());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(c) << err;
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
  EXPECT_EQ(c->token_file, (d.path / "token").string());
  EXPECT_EQ(c->ca_file, (d.path / "ca.crt").string());
}

}  // namespace
}  // namespace c2c::k8s
