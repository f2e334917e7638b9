#include "daemon/service/grpc_listeners.hpp"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_posix.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "daemon/service/health_reflection.hpp"

namespace c2c::daemon {
namespace {

bool read_pem(const std::string& path, const char* field, std::string* out, std::string* err) {
  std::ifstream in(path);
  if (!in) {
    *err = std::string(field) + ": cannot read " + path;
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  if (out->find("-----BEGIN") == std::string::npos) {
    *err = std::string(field) + ": " + path + " is not PEM";
    return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<Server> Server::start(const DaemonConfig& cfg, Engine& engine, Metrics& metrics, std::string* err) {
  std::unique_ptr<Server> s(new Server());
  grpc::EnableDefaultHealthCheckService(true);
  register_health_descriptor();  // so reflection can describe grpc.health.v1.Health, not only list it
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  s->service_ = std::make_unique<Service>(engine, metrics, cfg.max_message_bytes);
  grpc::ServerBuilder b;
  b.RegisterService(s->service_.get());
  // The daemon refuses requests above max_message_bytes itself (INVALID_ARGUMENT naming the
  // request); the transport limit sits 1 MiB above so that such requests reach it.
  b.SetMaxReceiveMessageSize(static_cast<int>(cfg.max_message_bytes + (1u << 20)));
  int tcp_port = 0;
  if (!cfg.tcp.address.empty()) {
    grpc::SslServerCredentialsOptions opts(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    if (!read_pem(cfg.tcp.key, "tcp.key", &pair.private_key, err) ||
        !read_pem(cfg.tcp.cert, "tcp.cert", &pair.cert_chain, err) ||
        !read_pem(cfg.tcp.client_ca, "tcp.client_ca", &opts.pem_root_certs, err))
      return nullptr;
    opts.pem_key_cert_pairs.push_back(pair);
    b.AddListeningPort(cfg.tcp.address, grpc::SslServerCredentials(opts), &tcp_port);
  }
  s->grpc_ = b.BuildAndStart();
  if (!s->grpc_) {
    *err = "gRPC server did not start";
    return nullptr;
  }
  if (!cfg.tcp.address.empty() && tcp_port == 0) {
    *err = "tcp.address: cannot listen on " + cfg.tcp.address;
    return nullptr;
  }
  if (!cfg.tcp.address.empty()) spdlog::info("listening on {} (TCP, mutual TLS required)", cfg.tcp.address);
  s->peers_ = std::make_shared<PeerPolicy>(cfg.allowed_uids, geteuid());
  grpc::Server* srv = s->grpc_.get();
  s->unix_ = UnixListener::open(cfg.socket, s->peers_, [srv](int fd) { grpc::AddInsecureChannelFromFd(srv, fd); },
                                cfg.max_connections, err);
  if (!s->unix_) return nullptr;
  spdlog::info("listening on {} (mode 0600, peer uid checked, at most {} connections)", cfg.socket,
               s->unix_->connection_cap());
  if (const std::string roles = role_socket_path(cfg); !roles.empty()) {
    s->roles_ = RoleSocket::open(roles, engine, s->peers_, cfg.role_limits, cfg.role_peer_identity, metrics, err);
    if (!s->roles_) return nullptr;
    spdlog::info("task roles on {} (mode 0666: any process may label its own threads, line protocol C2C-ROLE/1)", roles);
  }
  return s;
}

void Server::set_allowed_uids(const std::vector<uint32_t>& uids) { peers_->set(uids, geteuid()); }

void Server::stop_accepting() {
  if (roles_) roles_->stop();
  if (unix_) unix_->stop();
  if (service_) service_->stop_watches();
}

void Server::shutdown() {
  stop_accepting();
  if (grpc_) {
    grpc_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    grpc_->Wait();
    grpc_.reset();
  }
}

Server::~Server() { shutdown(); }

}  // namespace c2c::daemon
