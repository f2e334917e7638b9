// claim2core-rest: the original system's node-policy REST API and a web GUI, served over
// claim2cored's gRPC API on its Unix socket (src/rest/README.md).
#include <CLI/CLI.hpp>

#include <iostream>
#include <mutex>
#include <random>

#include "client/connection.hpp"
#include "rest/http_routes.hpp"
#include "rest/login_admin.hpp"

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
  c2c::client::ConnectionOptions co;
  std::string token_file = "/etc/claim2core/rest-tokens";
  int timeout_ms = 10000;
  app.add_option("--listen", so.host, "Address to listen on (beyond loopback only with TLS)")->capture_default_str();
  app.add_option("--port", so.port, "TCP port")->capture_default_str()->check(CLI::Range(1, 65535));
  app.add_option("--token-file", token_file, "Bearer tokens: '<token> <subject> <perm>[,<perm>...]' a line; "
                                             "root-owned, mode 0600")->capture_default_str();
  app.add_option("--tls-cert", so.tls_cert, "PEM certificate (needed beyond loopback)");
  app.add_option("--tls-key", so.tls_key, "PEM private key");
  app.add_option("--socket", co.socket, "claim2cored's Unix socket (default $CLAIM2CORE_SOCKET, else " +
                                            std::string(c2c::client::kDefaultSocket) + ")");
  app.add_option("--rpc-timeout-ms", timeout_ms, "Deadline of each daemon call")->capture_default_str()->check(CLI::Range(1, 600000));
  app.add_option("--max-event-streams", so.max_event_streams, "Open /api/v1/events streams at most")->capture_default_str();
  // The bounds of issue 42 (src/rest/README.md "Limits", spec/daemon.md "REST gateway").
  size_t max_json_depth = c2c::rest::kDefaultMaxJsonDepth;
  int64_t header_timeout_ms = so.limits.header_timeout.count(), body_timeout_ms = so.limits.body_timeout.count();
  app.add_option("--max-json-depth", max_json_depth, "Deepest nesting of arrays/objects a JSON body may have (400 above)")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--max-body-bytes", so.max_body_bytes, "Largest request body (413 above)")
      ->capture_default_str()->check(CLI::Range(1024, 64 << 20));
  app.add_option("--max-header-bytes", so.limits.max_header_bytes, "Largest request head: request line + headers (431 above)")
      ->capture_default_str()->check(CLI::Range(1024, 1 << 20));
  app.add_option("--header-timeout-ms", header_timeout_ms,
                 "The whole request head must arrive within this of the connection (or, kept alive, of its first byte); 408 after")
      ->capture_default_str()->check(CLI::Range(100, 600000));
  app.add_option("--body-timeout-ms", body_timeout_ms, "The whole body must arrive within this of the head; 408 after")
      ->capture_default_str()->check(CLI::Range(100, 600000));
  app.add_option("--max-connections", so.limits.max_connections, "Connections served at once (503 and closed above)")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  app.add_option("--max-connections-per-client", so.limits.max_connections_per_client,
                 "Connections served at once from one client address (429 and closed above)")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  app.add_option("--worker-threads", so.worker_threads, "HTTP worker threads; more than --max-connections")
      ->capture_default_str()->check(CLI::Range(2, 4097));
  // Issue 47: the original GUI from another origin, or from a folder served here.
  app.add_option("--cors-origin", so.cors.origins,
                 "An origin (http[s]://host[:port]) whose pages may call the API (repeat for more; default none: no CORS)");
  std::string gui_dir;
  app.add_option("--gui-dir", gui_dir, "Serve this folder (a built web GUI with index.html) instead of the embedded GUI");
  // The password login (issue 47; login_service.hpp): off without --users-file.
  std::string users_file, jwt_key;
  c2c::rest::LoginOptions lo;
  int64_t access_s = lo.access_ttl.count(), refresh_s = lo.refresh_ttl.count(), window_s = lo.per_user.window.count();
  app.add_option("--users-file", users_file, "Users of the password login: '<username> <admin|read-only> <argon2id hash>' "
                                             "a line; root-owned, mode 0600 (add-user writes it)");
  app.add_option("--jwt-key", jwt_key, "PEM EC P-256 private key signing the login's tokens (default: drawn at start; "
                                       "tokens then end with the process)");
  app.add_option("--access-token-seconds", access_s, "Lifetime of an access token")->capture_default_str()->check(CLI::Range(1, 86400));
  app.add_option("--refresh-token-seconds", refresh_s, "Lifetime of a refresh token")->capture_default_str()->check(CLI::Range(1, 30 * 86400));
  app.add_option("--login-max-failures", lo.per_user.max_failures, "Failed logins of one user per window (429 after)")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--login-max-failures-per-client", lo.per_client.max_failures,
                 "Failed logins from one client address per window (429 after)")->capture_default_str()->check(CLI::Range(1, 10000));
  app.add_option("--login-window-seconds", window_s, "The failed-login window")->capture_default_str()->check(CLI::Range(1, 86400));
  app.add_option("--max-revoked-tokens", lo.max_revoked, "Logged-out tokens remembered until they expire (past it: "
                                                         "the user's tokens issued so far)")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  auto* add = app.add_subcommand("add-user", "Add a user to --users-file, the password read from stdin (one line)");
  std::string add_name, add_role = c2c::rest::kRoleAdmin;
  add->add_option("username", add_name, "A DNS-1123 label: the owner of the policies it creates")->required();
  add->add_option("--role", add_role, "admin or read-only")->capture_default_str();
  app.require_subcommand(0, 1);
  CLI11_PARSE(app, argc, argv);
  if (*add) {
    if (users_file.empty()) {
      std::cerr << "claim2core-rest add-user: --users-file is required (before add-user)\n";
      return 2;
    }
    return c2c::rest::add_user(users_file, add_name, add_role, std::cin);
  }
  if (!users_file.empty()) {
    try {
      auto users = c2c::rest::load_users_file(users_file);
      auto signer = jwt_key.empty() ? c2c::rest::TokenSigner::generate() : c2c::rest::TokenSigner::load(jwt_key);
      lo.access_ttl = std::chrono::seconds(access_s);
      lo.refresh_ttl = std::chrono::seconds(refresh_s);
      lo.per_user.window = lo.per_client.window = std::chrono::seconds(window_s);
      lo.limits.max_json_depth = max_json_depth;
      lo.now = [] { return static_cast<int64_t>(std::time(nullptr)); };
      lo.steady = [] { return std::chrono::steady_clock::now(); };
      lo.clock = [] { return std::chrono::system_clock::now(); };
      so.login = std::make_shared<c2c::rest::LoginService>(std::move(users), users_file, std::move(signer), lo);
    } catch (const std::exception& e) {
      std::cerr << "claim2core-rest: " << e.what() << "\n";
      return 2;
    }
  } else if (!jwt_key.empty()) {
    std::cerr << "claim2core-rest: --jwt-key needs --users-file (the password login)\n";
    return 2;
  }
  for (const auto& origin : so.cors.origins)
    if (auto p = c2c::rest::cors_origin_problem(origin)) {
      std::cerr << "claim2core-rest: " << *p << "\n";
      return 2;
    }
  if (!gui_dir.empty()) {
    try {
      so.gui = std::make_shared<const c2c::rest::GuiDir>(gui_dir);
    } catch (const std::exception& e) {
      std::cerr << "claim2core-rest: " << e.what() << "\n";
      return 2;
    }
  }
  so.limits.header_timeout = std::chrono::milliseconds(header_timeout_ms);
  so.limits.body_timeout = std::chrono::milliseconds(body_timeout_ms);
  if (auto p = c2c::rest::options_problem(so)) {
    std::cerr << "claim2core-rest: " << *p << "\n";
    return 2;
  }

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
  co.timeout = std::chrono::milliseconds(timeout_ms);
  std::unique_ptr<c2c::client::NodeClient> node;
  try {
    node = std::make_unique<c2c::client::NodeClient>(co);
  } catch (const std::exception& e) {
    std::cerr << "claim2core-rest: " << e.what() << "\n";
    return 2;
  }
  c2c::rest::GatewayOptions go;
  go.new_id = random_policy_id;
  go.clock = [] { return std::chrono::system_clock::now(); };
  go.limits.max_json_depth = max_json_depth;
  c2c::rest::RestMetrics metrics;
  go.on_refusal = [&metrics](const std::string& reason) { metrics.refused(reason); };
  if (so.login) {
    so.login->set_on_refusal(go.on_refusal);
    go.bearer = [login = so.login](const std::string& presented) { return login->check_bearer(presented); };
  }
  c2c::rest::Gateway gw(*node, std::move(tokens), go);
  return c2c::rest::serve(gw, *node, so, metrics);
}
