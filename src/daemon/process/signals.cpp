#include "daemon/process/signals.hpp"

#include <csignal>
#include <cerrno>

namespace c2c::daemon {
namespace {
sigset_t daemon_set() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGHUP);
  return s;
}
}  // namespace

void block_daemon_signals() {
  sigset_t s = daemon_set();
  pthread_sigmask(SIG_BLOCK, &s, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

Signal wait_signal() {
  sigset_t s = daemon_set();
  while (true) {
    int sig = sigwaitinfo(&s, nullptr);
    if (sig == SIGHUP) return Signal::Reload;
    if (sig == SIGTERM || sig == SIGINT) return Signal::Terminate;
  }
}

}  // namespace c2c::daemon
