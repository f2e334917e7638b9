#include "client/connection.hpp"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace c2c::client {
namespace {

std::string read_pem(const std::string& flag, const std::string& path) {
  if (path.empty()) throw ConnectionError(flag + ": required with --server (TCP is mutual TLS only)");
  std::ifstream in(path);
  if (!in) throw ConnectionError(flag + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().find("-----BEGIN") == std::string::npos) throw ConnectionError(flag + ": " + path + " is not PEM");
  return ss.str();
}

}  // namespace

std::string resolve_socket(const ConnectionOptions& o) {
  if (!o.socket.empty()) return o.socket;
  if (const char* env = std::getenv(kSocketEnv); env && *env) return env;
  return kDefaultSocket;
}

std::string target_of(const ConnectionOptions& o) {
  if (!o.server.empty()) return o.server;
  return "unix:" + resolve_socket(o);
}

std::shared_ptr<grpc::Channel> open_channel(const ConnectionOptions& o) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);  // a node with many threads lists many tasks
  if (o.server.empty()) {
    if (!o.cacert.empty() || !o.cert.empty() || !o.key.empty())
      throw ConnectionError("--cacert/--cert/--key: only with --server (the Unix socket uses peer credentials)");
    return grpc::CreateCustomChannel(target_of(o), grpc::InsecureChannelCredentials(), args);
  }
  if (!o.socket.empty()) throw ConnectionError("--socket and --server: choose one");
  if (o.server.find(':') == std::string::npos) throw ConnectionError("--server: expected HOST:PORT, got '" + o.server + "'");
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = read_pem("--cacert", o.cacert);
  tls.pem_cert_chain = read_pem("--cert", o.cert);
  tls.pem_private_key = read_pem("--key", o.key);
  if (!o.tls_server_name.empty()) args.SetSslTargetNameOverride(o.tls_server_name);
  return grpc::CreateCustomChannel(o.server, grpc::SslCredentials(tls), args);
}

}  // namespace c2c::client
