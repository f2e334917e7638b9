// systemd's service protocol (Type=notify, sd_notify(3)): READY=1 once the socket serves,
// STOPPING=1 when SIGTERM starts the drain, and WATCHDOG=1 while the engine's loop still turns
// (WatchdogSec in the unit: a wedged loop gets the daemon restarted instead of serving stale
// answers). Outside systemd (no NOTIFY_SOCKET) every call does nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace c2c::daemon {

void notify_ready(const std::string& status);
void notify_stopping(const std::string& status);

// Half the interval systemd asked for (WATCHDOG_USEC, for this process: WATCHDOG_PID), or 0 when
// the watchdog is off.
std::chrono::microseconds watchdog_period();

// Pings WATCHDOG=1 every period while alive(timeout) returns true within the period; a false
// or late answer skips the ping, so systemd's timer runs out. Stops in its destructor.
class Watchdog {
 public:
  Watchdog(std::chrono::microseconds period, std::function<bool(std::chrono::milliseconds)> alive);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void run();
  std::chrono::microseconds period_;
  std::function<bool(std::chrono::milliseconds)> alive_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace c2c::daemon
