// A claim2cored for a benchmark: a real process (fork/exec) on a private socket, state dir and pin
// root, with its log in <root>/daemon.log; ready once Status answers. The destructor stops it
// (SIGTERM, waits) and removes its pins; the private directory (and its log) only after
// remove_root().
#pragma once

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <linux/types.h>

#include "claim2core.grpc.pb.h"
#include "claim2core_abi.h"

namespace c2c::bench {

class BenchDaemon {
 public:
  // `tag` names the private directories (/tmp/c2c-<tag>-<pid>, /sys/fs/bpf/c2c-<tag>-<pid>).
  BenchDaemon(const std::string& exe, const std::string& tag, const std::string& config_yaml,
              const std::string& log_level = "info")
      : root_(unused_path("/tmp/c2c-" + tag + "-" + std::to_string(::getpid()))),
        pin_("/sys/fs/bpf/" + std::filesystem::path(root_).filename().string()) {
    std::filesystem::create_directories(root_ + "/run");
    const std::string config = root_ + "/config.yaml", sock = root_ + "/run/d.sock", log = root_ + "/daemon.log";
    if (FILE* f = std::fopen(config.c_str(), "w")) {
      std::fputs(config_yaml.c_str(), f);
      std::fclose(f);
    }
    const auto t0 = std::chrono::steady_clock::now();
    pid_ = ::fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log.c_str(), "w", stderr);
      (void)f;
      // C2C_BENCH_DAEMON_LOG=debug (say) overrides the level; the directory and its log are then kept.
      const char* level = std::getenv("C2C_BENCH_DAEMON_LOG");
      ::execl(exe.c_str(), exe.c_str(), "--socket", sock.c_str(), "--state-dir", (root_ + "/state").c_str(),
              "--pin-root", pin_.c_str(), "--node-name", "bench-node", "--log-level", level ? level : log_level.c_str(),
              "--config", config.c_str(), nullptr);
      ::_exit(127);
    }
    // The channel is made once the socket exists: a first attempt on a missing socket puts gRPC
    // into its reconnect backoff (seconds), which would be timed as the daemon's start.
    const auto until = t0 + std::chrono::seconds(30);
    while (!std::filesystem::exists(sock) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stub_ = claim2core::v1::Claim2Core::NewStub(
        grpc::CreateChannel("unix://" + sock, grpc::InsecureChannelCredentials()));
    while (!ready_ && std::chrono::steady_clock::now() < until) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
      claim2core::v1::StatusResponse st;
      ready_ = stub_->Status(&ctx, claim2core::v1::StatusRequest(), &st).ok();
      if (!ready_) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ready_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  ~BenchDaemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    for (const char* m : {C2C_POLICY_MAP_NAME, C2C_STATS_MAP_NAME, C2C_EVENTS_MAP_NAME, C2C_META_MAP_NAME})
      ::unlink((pin_ + "/" + m).c_str());
    ::rmdir(pin_.c_str());
    if (remove_root_ && !std::getenv("C2C_BENCH_DAEMON_LOG")) std::filesystem::remove_all(root_);
  }
  BenchDaemon(const BenchDaemon&) = delete;
  BenchDaemon& operator=(const BenchDaemon&) = delete;

  // `base`, or base-2, base-3 ...: a directory kept by an earlier run (C2C_BENCH_DAEMON_LOG) whose
  // process had the same pid must not hand this daemon its durable state.
  static std::string unused_path(const std::string& base) {
    std::string p = base;
    for (int i = 2; std::filesystem::exists(p) || std::filesystem::exists("/sys/fs/bpf/" + std::filesystem::path(p).filename().string()); ++i)
      p = base + "-" + std::to_string(i);
    return p;
  }

  bool ready() const { return ready_; }
  double ready_ms() const { return ready_ms_; }
  // The daemon's process id, for /proc/<pid> figures (its CPU time, its RSS).
  pid_t pid() const { return pid_; }
  claim2core::v1::Claim2Core::Stub& stub() { return *stub_; }
  std::string pin(const char* map) const { return pin_ + "/" + map; }
  std::string log() const { return root_ + "/daemon.log"; }
  // Its private directory and the --state-dir inside it (same file system as the durable state).
  const std::string& root() const { return root_; }
  std::string state_dir() const { return root_ + "/state"; }
  // On success the private directory goes with the daemon; kept otherwise (its log says why).
  void remove_root() { remove_root_ = true; }

 private:
  std::string root_, pin_;
  pid_t pid_ = -1;
  std::unique_ptr<claim2core::v1::Claim2Core::Stub> stub_;
  bool ready_ = false;
  bool remove_root_ = false;
  double ready_ms_ = 0;
};

}  // namespace c2c::bench
