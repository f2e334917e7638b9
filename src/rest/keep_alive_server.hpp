// The gateway's plain-HTTP server: httplib::Server with its own wait for a keep-alive
// connection's next request.
//
// Why: httplib 0.11 (Debian 12's libcpp-httplib0.11) waits for the next request on a kept-alive
// connection by polling 10 ms and then sleeping 1 ms, over and over. A request that arrives during
// the sleep waits for it to end (up to ~1.1 ms; about one request in ten when requests are more
// than 10 ms apart, as a script or the GUI makes them), and every idle connection wakes the
// gateway ~90 times a second. This server waits in poll(2) until the request arrives (in slices,
// so stop() still ends idle connections promptly). TLS (httplib::SSLServer) keeps httplib's loop.
#pragma once

#include <httplib.h>

#include <chrono>

namespace c2c::rest {

class KeepAliveServer : public httplib::Server {
 private:
  bool process_and_close_socket(socket_t sock) override;
};

// How long one poll(2) in the wait may last before the server checks whether it was stopped.
inline constexpr std::chrono::milliseconds kStopCheckInterval{200};

}  // namespace c2c::rest
