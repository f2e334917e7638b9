// The HTTP side of claim2core-rest: routes -> Gateway, the SSE event stream from Watch, the
// embedded web GUI, and the headers every response carries (CSP, caching, nosniff).
#pragma once

#include <memory>
#include <string>

#include "rest/cors_policy.hpp"
#include "rest/gateway.hpp"
#include "rest/gui_dir.hpp"
#include "rest/login_service.hpp"
#include "rest/keep_alive_server.hpp"
#include "rest/rest_metrics.hpp"

namespace c2c::rest {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string tls_cert;  // PEM files; both or neither
  std::string tls_key;
  size_t max_event_streams = 8;  // each open /api/v1/events holds a worker thread (and a connection)
  ConnectionLimits limits;       // deadlines, header size, connections per client and in all
  size_t worker_threads = 68;    // --worker-threads: more than limits.max_connections
  size_t max_body_bytes = 1 << 20;  // --max-body-bytes (413 above)
  CorsPolicy cors;                   // --cors-origin (none: no CORS, no preflight answered)
  std::shared_ptr<const GuiDir> gui;  // --gui-dir: served instead of the embedded GUI
  std::shared_ptr<LoginService> login;  // --users-file: the password login (none: 404)
};

// Why these options must not be used (a flag named), or nullopt.
std::optional<std::string> options_problem(const ServerOptions& o);

// Listens until SIGTERM/SIGINT; returns the exit status (1 when it cannot listen).
int serve(Gateway& gw, const client::NodeClient& node, const ServerOptions& o, RestMetrics& metrics);

}  // namespace c2c::rest
