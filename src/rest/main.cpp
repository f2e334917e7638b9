// claim2core-rest: the original system's node-policy REST API and a web GUI, served over
// claim2cored's gRPC API on its Unix socket (src/rest/README.md).
#include <CLI/CLI.hpp>

#include <iostream>
#include <mutex>
#include <random>

#include "cli/connection.hpp"
#include "rest/server.hpp"

namespace {

// 12 random bytes in hex, the shape of the original's Mongo ObjectIDs.
std::string random_policy_id() {
  static std::mutex mu;  // HTTP workers create policies concurrently; random_device is not thread-safe
  std::lock_guard<std::mutex> lock(mu);
  static std::random_device rd;  // getrandom(2)
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 12; ++i) {
    unsigned b = rd() & 0xffu;
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"claim2core-rest: the node-policy REST API and web GUI over claim2cored's gRPC API"};
  c2c::rest::ServerOptions so;
  c2c::cli::ConnectionOptions co;
  std::string token_file = "/etc/claim2core/rest-tokens";
  int timeout_ms = 10000;
  app.add_option("--listen", so.host, "Address to listen on (beyond loopback only with TLS)")->capture_default_str();
  app.add_option("--port", so.port, "TCP port")->capture_default_str()->check(CLI::Range(1, 65535));
  app.add_option("--token-file", token_file, "Bearer tokens: '<token> <subject> <perm>[,<perm>...]' a line; "
                                             "root-owned, mode 0600")->capture_default_str();
  app.add_option("--tls-cert", so.tls_cert, "PEM certificate (needed beyond loopback)");
  app.add_option("--tls-key", so.tls_key, "PEM private key");
  app.add_option("--socket", co.socket, "claim2cored's Unix socket (default $CLAIM2CORE_SOCKET, else " +
                                            std::string(c2c::cli::kDefaultSocket) + ")");
  app.add_option("--rpc-timeout-ms", timeout_ms, "Deadline of each daemon call")->capture_default_str()->check(CLI::Range(1, 600000));
  app.add_option("--max-event-streams", so.max_event_streams, "Open /api/v1/events streams at most")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  if (so.tls_cert.empty() != so.tls_key.empty()) {
    std::cerr << "claim2core-rest: --tls-cert and --tls-key go together\n";
    return 2;
  }
  if (auto p = c2c::rest::bind_problem(so.host, !so.tls_cert.empty())) {
    std::cerr << "claim2core-rest: " << *p << "\n";
    return 2;
  }
  c2c::rest::TokenTable tokens;
  try {
    tokens = c2c::rest::load_token_file(token_file);
  } catch (const std::exception& e) {
    std::cerr << "claim2core-rest: " << e.what() << "\n";
    return 2;
  }
  if (tokens.tokens.empty()) std::cerr << "claim2core-rest: warning: " << token_file << " holds no token; every API call is refused\n";
  std::shared_ptr<grpc::Channel> channel;
  try {
    channel = c2c::cli::open_channel(co);
  } catch (const std::exception& e) {
    std::cerr << "claim2core-rest: " << e.what() << "\n";
    return 2;
  }
  auto stub = claim2core::v1::Claim2Core::NewStub(channel);
  c2c::rest::GatewayOptions go;
  go.rpc_timeout = std::chrono::milliseconds(timeout_ms);
  go.new_id = random_policy_id;
  go.clock = [] { return std::chrono::system_clock::now(); };
  c2c::rest::Gateway gw(*stub, std::move(tokens), go);
  return c2c::rest::serve(gw, *stub, so);
}
