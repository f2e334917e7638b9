// RPC -> pinned map latency at 1 and 16 concurrent clients (issue #13 item 3), one or more
// claim2cored binaries side by side (e.g. this build and the previous write path):
//   each client k owns a thread named c2cr-<k> and a node policy matching only it, and calls
//   UpsertPolicy with a new generation and slice back to back. The clock starts at the call
//   (ClientContext made, request built before) and stops at the reply; the map is then read and
//   must already hold the new slice (claim2cored writes the map before it replies, after the
//   batch is durable), so the figure bounds RPC -> map from above. p50/p99 per binary and client
//   count, with the load average before and after (the machine is shared: compare columns of one
//   run, not runs). The clients run SCHED_FIFO 1 (instrument_priority.hpp): on a busy host their
//   own wake-up by the reply is not timed; the daemon runs as its config says (--variant).
// Needs root and bpffs. Run:
//   build/bench/daemon_rpc_latency_bench [--iterations N] [--rounds R] [--variant YAML]...
//       [--only-variants] [--clients C] <claim2cored> [<other claim2cored> ...]
//   e.g. on a busy host (stress-ng --cpu 0 beside it), time-shared against SCHED_FIFO:
//   build/bench/daemon_rpc_latency_bench --rounds 2 --variant 'realtime_priority: 1' build/src/daemon/claim2cored
#include <bpf/bpf.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <linux/types.h>

#include "claim2core.grpc.pb.h"
#include "daemon_bench_policy.hpp"
#include "durable_append_floor.hpp"
#include "instrument_priority.hpp"
#include "claim2core_abi.h"

namespace pb = claim2core::v1;
using Clock = std::chrono::steady_clock;

namespace {

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

struct Quantiles {
  double p50 = 0, p99 = 0, max = 0;
  size_t n = 0;
};

Quantiles quantiles(std::vector<double> v) {
  Quantiles q;
  if (v.empty()) return q;
  std::sort(v.begin(), v.end());
  auto at = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))]; };
  q.p50 = at(0.5);
  q.p99 = at(0.99);
  q.max = v.back();
  q.n = v.size();
  return q;
}

using c2c::bench::node_policy;

// One parked thread per client, named for its policy.
class Parked {
 public:
  explicit Parked(const std::string& name) {
    t_ = std::thread([this, name] {
      prctl(PR_SET_NAME, name.c_str(), 0, 0, 0);
      tid_ = static_cast<uint32_t>(syscall(SYS_gettid));
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stop_; });
    });
    while (tid_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Parked() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    t_.join();
  }
  uint32_t tid() const { return tid_; }

 private:
  std::thread t_;
  std::atomic<uint32_t> tid_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

struct Daemon {
  pid_t pid = -1;
  std::string root, pin, sock;
  std::unique_ptr<pb::Claim2Core::Stub> stub;
  int map_fd = -1;

  // config_yaml: the daemon's config file (empty: all defaults), e.g. "realtime_priority: 1".
  bool start(const std::string& bin, const std::string& config_yaml, int index) {
    root = "/tmp/c2c-rpc-bench-" + std::to_string(getpid()) + "-" + std::to_string(index);
    pin = "/sys/fs/bpf/c2c-rpc-bench-" + std::to_string(getpid()) + "-" + std::to_string(index);
    sock = root + "/run/d.sock";
    std::filesystem::create_directories(root);
    const std::string config = root + "/config.yaml";
    std::ofstream(config) << config_yaml << "\n";
    pid = fork();
    if (pid == 0) {
      FILE* f = std::freopen((root + "/daemon.log").c_str(), "w", stderr);
      (void)f;
      execl(bin.c_str(), bin.c_str(), "--socket", sock.c_str(), "--state-dir", (root + "/state").c_str(), "--pin-root",
            pin.c_str(), "--node-name", "bench-node", "--log-level", "warn", "--config", config.c_str(), nullptr);
      _exit(127);
    }
    stub = pb::Claim2Core::NewStub(grpc::CreateChannel("unix://" + sock, grpc::InsecureChannelCredentials()));
    auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
      pb::StatusResponse st;
      if (stub->Status(&ctx, pb::StatusRequest(), &st).ok()) {
        map_fd = bpf_obj_get((pin + "/" C2C_POLICY_MAP_NAME).c_str());
        return map_fd >= 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::fprintf(stderr, "%s did not start (see %s/daemon.log)\n", bin.c_str(), root.c_str());
    return false;
  }
  void stop() {
    if (map_fd >= 0) close(map_fd);
    if (pid > 0) {
      kill(pid, SIGTERM);
      int status = 0;
      waitpid(pid, &status, 0);
    }
    for (const char* n : {C2C_POLICY_MAP_NAME, C2C_STATS_MAP_NAME, C2C_EVENTS_MAP_NAME, C2C_META_MAP_NAME})
      unlink((pin + "/" + n).c_str());
    rmdir(pin.c_str());
    std::filesystem::remove_all(root);
  }
};

// `clients` threads, each `iters` upserts of its own policy; the reply latencies of all. With a
// `floor`, one durable append of the call's record before each call, its latency into *floor_us
// (one client only: 16 clients' calls share a group commit, their floor is not one append each).
std::vector<double> run(Daemon& d, int clients, int iters, int round, c2c::bench::DurableAppendFloor* floor = nullptr,
                        std::vector<double>* floor_us = nullptr) {
  std::vector<std::unique_ptr<Parked>> threads;
  for (int k = 0; k < clients; ++k) threads.push_back(std::make_unique<Parked>("c2cr-" + std::to_string(round) + "-" + std::to_string(k)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the daemon sees the names
  std::vector<std::vector<double>> lat(static_cast<size_t>(clients));
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int k = 0; k < clients; ++k)
    callers.emplace_back([&, k] {
      c2c::bench::instrument_realtime();
      const std::string tname = "c2cr-" + std::to_string(round) + "-" + std::to_string(k);
      const std::string pname = "rpc-" + std::to_string(round) + "-" + std::to_string(k);
      const uint32_t tid = threads[static_cast<size_t>(k)]->tid();
      for (int i = 1; i <= iters + 5; ++i) {  // the first 5 warm up the connection
        uint64_t slice = 1'000'000 + static_cast<uint64_t>(i % 2) * 1'000'000;
        pb::UpsertPolicyRequest req;
        *req.mutable_policy() = node_policy(pname, i, "^" + tname + "$", slice);
        pb::UpsertPolicyResponse resp;
        grpc::ClientContext ctx;
        const double floor_sample = floor ? floor->before_call() : 0;
        auto t0 = Clock::now();
        auto s = d.stub->UpsertPolicy(&ctx, req, &resp);
        auto t1 = Clock::now();
        if (floor) {
          floor->after_call();
          if (i > 5) floor_us->push_back(floor_sample);
        }
        c2c_policy_value v{};
        // The reply says SENT (written, the read-back pass confirms later) or APPLIED; the bench
        // checks the map itself, so "the map already updated" is measured, not taken from the reply.
        const auto state = resp.intent().state();
        if (!s.ok() || (state != pb::SENT && state != pb::APPLIED) || bpf_map_lookup_elem(d.map_fd, &tid, &v) != 0 ||
            v.slice_ns != slice) {
          if (failures++ == 0)
            std::fprintf(stderr, "call %d of client %d: %s %s (map slice %llu, wanted %llu)\n", i, k,
                         s.error_message().c_str(), resp.intent().reason().c_str(),
                         static_cast<unsigned long long>(v.slice_ns), static_cast<unsigned long long>(slice));
          continue;
        }
        if (i > 5) lat[static_cast<size_t>(k)].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
    });
  for (auto& c : callers) c.join();
  if (failures) std::fprintf(stderr, "%d calls failed or left the map behind\n", failures.load());
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 300, rounds = 1;
  std::vector<std::string> bins, variants{""};
  std::vector<int> client_counts{1, 16};
  bool only_variants = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--variant") == 0 && i + 1 < argc) variants.emplace_back(argv[++i]);
    else if (std::strcmp(argv[i], "--only-variants") == 0) only_variants = true;
    else if (std::strcmp(argv[i], "--clients") == 0 && i + 1 < argc) client_counts = {std::atoi(argv[++i])};
    else bins.emplace_back(argv[i]);
  }
  if (only_variants) variants.erase(variants.begin());  // the default config's ""
  if (bins.empty() || iters < 1 || rounds < 1 || variants.empty() || client_counts.front() < 1) {
    std::fprintf(stderr,
                 "usage: %s [--iterations N] [--rounds R] [--variant YAML]... [--only-variants] [--clients C]\n"
                 "          <claim2cored> [<other claim2cored> ...]\n"
                 "  each claim2cored runs with the default config (not with --only-variants), then with each\n"
                 "  --variant as its config file (e.g. --variant 'realtime_priority: 1'); R rounds of all of\n"
                 "  them, one after the other; at 1 and 16 clients, or at C only\n",
                 argv[0]);
    return 2;
  }
  if (geteuid() != 0) {
    std::printf("skipped: needs root (bpffs, BPF maps)\n");
    return 0;
  }
  const std::string instrument = c2c::bench::instrument_realtime();
  std::printf("UpsertPolicy -> reply (the map already updated), %d calls per client, %u CPUs; load average %s\n%s\n",
              iters, std::thread::hardware_concurrency(), loadavg().c_str(), instrument.c_str());
  std::printf("%-48s %7s %6s %10s %10s %10s   goal p99 <= 1000 us\n", "claim2cored [config]", "clients", "n", "p50 us",
              "p99 us", "max us");
  int rc = 0, round = 0, index = 0;
  for (int r = 0; r < rounds; ++r)
    for (const auto& bin : bins)
      for (const auto& variant : variants) {
        const std::string label = variant.empty() ? bin : bin + " [" + variant + "]";
        Daemon d;
        if (!d.start(bin, variant, index++)) {
          d.stop();
          rc = 1;
          continue;
        }
        for (int clients : client_counts) {
          c2c::bench::DurableAppendFloor floor(d.root, d.root + "/state", 256);
          std::vector<double> floor_us;
          const bool with_floor = clients == 1 && floor.ok();
          // Fewer calls per client at 16 clients: the same total order of magnitude.
          auto q = quantiles(run(d, clients, clients == 1 ? iters : std::max(20, iters / 4), round++,
                                 with_floor ? &floor : nullptr, &floor_us));
          // No sample is no figure: never "met" (every call failed, see the message above).
          const char* verdict = q.n == 0 ? "NO SAMPLES" : q.p99 <= 1000 ? "met" : "NOT met";
          if (q.n == 0) rc = 1;
          std::printf("%-48s %7d %6zu %10.1f %10.1f %10.1f   %s\n", label.c_str(), clients, q.n, q.p50, q.p99, q.max,
                      verdict);
          if (with_floor) {
            const auto f = quantiles(floor_us);
            const bool failed = std::any_of(floor_us.begin(), floor_us.end(), [](double v) { return v < 0; });
            std::printf("%-48s %7s %6zu %10.1f %10.1f %10.1f   %s\n", "  its floor: the record appended + fdatasync",
                        "", f.n, f.p50, f.p99, f.max,
                        failed ? "the floor's write failed" : "(before each call, beside the state log)");
          }
          std::fflush(stdout);
        }
        d.stop();
      }
  std::printf("load average after: %s\n", loadavg().c_str());
  return rc;
}
