// Signals are taken synchronously by the main thread (sigwaitinfo): block them before any other
// thread starts, so that no gRPC or libbpf thread ever runs a handler.
#pragma once

namespace c2c::daemon {

enum class Signal { Terminate, Reload };

// Blocks SIGTERM, SIGINT, SIGHUP in the calling thread (inherited by threads it starts later)
// and ignores SIGPIPE.
void block_daemon_signals();
// Waits for the next one: SIGTERM/SIGINT -> Terminate, SIGHUP -> Reload.
Signal wait_signal();

}  // namespace c2c::daemon
