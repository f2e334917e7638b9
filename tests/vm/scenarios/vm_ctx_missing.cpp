#include "vm_ctx_missing.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>

#include <bpf/bpf.h>
#include <nlohmann/json.hpp>

#include "claim2core_abi.h"
#include "vm_proc.hpp"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL  // include/uapi/linux/pidfd.h (6.9): a pidfd for a thread, not a process
#endif

namespace c2c::vm {
namespace {

std::string scx_state() {
  std::ifstream in("/sys/kernel/sched_ext/state");
  std::string s;
  std::getline(in, s);
  return s;
}

// Deletes tid's element of the pinned task storage map; "" on success, else why not.
std::string delete_task_ctx(pid_t tid, const std::string& pin_root) {
  const std::string path = pin_root + "/" + C2C_TASK_CNT_MAP_NAME;
  const int map = bpf_obj_get(path.c_str());
  if (map < 0) return path + ": " + std::strerror(errno);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, tid, PIDFD_THREAD));
  if (pidfd < 0) pidfd = static_cast<int>(syscall(SYS_pidfd_open, tid, 0));
  if (pidfd < 0) {
    const std::string why = "pidfd_open " + std::to_string(tid) + ": " + std::strerror(errno);
    close(map);
    return why;
  }
  const int rc = bpf_map_delete_elem(map, &pidfd);
  const int err = errno;
  close(pidfd);
  close(map);
  return rc == 0 ? "" : "deleting the context of " + std::to_string(tid) + ": " + std::strerror(err);
}

}  // namespace

int cmd_ctx_missing(int cpu, const std::string& pin_root, int wait_ms) {
  std::atomic<bool> stop{false};
  std::atomic<pid_t> victim{0};
  auto hog = [&](bool first) {
    pin_self(cpu);
    if (first) victim = gettid_now();
    while (!stop.load(std::memory_order_relaxed)) burn_until(mono_ns() + 1000000);
  };
  std::thread a(hog, true), b(hog, false);
  while (victim.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both hogs queued on cpu
  const std::string before = scx_state();
  const std::string why = delete_task_ctx(victim.load(), pin_root);
  const auto t0 = std::chrono::steady_clock::now();
  std::string state = scx_state();
  while (why.empty() && state == "enabled" &&
         std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(wait_ms)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    state = scx_state();
  }
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  stop = true;
  a.join();
  b.join();
  const bool pass = before == "enabled" && why.empty() && state != "enabled";
  nlohmann::json j{{"scenario", "ctxgone"}, {"tid", victim.load()}, {"deleted", why.empty()},
                   {"state_before", before}, {"state", state}, {"waited_ms", waited.count()}, {"pass", pass}};
  if (!why.empty()) j["error"] = why;
  std::cout << j.dump() << std::endl;
  return pass ? 0 : 1;
}

}  // namespace c2c::vm
