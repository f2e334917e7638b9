#include "daemon/process/sd_notify.hpp"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

namespace c2c::daemon {

void notify_ready(const std::string& status) { sd_notifyf(0, "READY=1\nSTATUS=%s", status.c_str()); }

void notify_stopping(const std::string& status) { sd_notifyf(0, "STOPPING=1\nSTATUS=%s", status.c_str()); }

std::chrono::microseconds watchdog_period() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0) return std::chrono::microseconds(0);
  return std::chrono::microseconds(usec / 2);
}

Watchdog::Watchdog(std::chrono::microseconds period, std::function<bool(std::chrono::milliseconds)> alive)
    : period_(period), alive_(std::move(alive)) {
  if (period_.count() > 0) thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::run() {
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(period_);
  bool warned = false;
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    bool ok = alive_(wait);
    lock.lock();
    if (stop_) break;
    if (ok) {
      sd_notify(0, "WATCHDOG=1");
      warned = false;
    } else if (!warned) {
      spdlog::error("watchdog: the engine loop did not answer within {} ms; not pinging systemd", wait.count());
      warned = true;
    }
    cv_.wait_for(lock, period_, [this] { return stop_; });
  }
}

}  // namespace c2c::daemon
