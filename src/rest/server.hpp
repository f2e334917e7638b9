// The HTTP side of claim2core-rest: routes -> Gateway, the SSE event stream from Watch, the
// embedded web GUI, and the headers every response carries (CSP, caching, nosniff).
#pragma once

#include <string>

#include "rest/gateway.hpp"

namespace c2c::rest {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string tls_cert;  // PEM files; both or neither
  std::string tls_key;
  size_t max_event_streams = 8;  // each open /api/v1/events holds a worker thread
};

// Listens until SIGTERM/SIGINT; returns the exit status (1 when it cannot listen).
int serve(Gateway& gw, pb::Claim2Core::StubInterface& stub, const ServerOptions& o);

}  // namespace c2c::rest
