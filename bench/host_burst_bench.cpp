// Issue 13, "Bursts": N threads starting at once (a process creating them back to back, each
// naming itself so that a node policy matches it: a fork and a rename record per thread) ->
// every matching entry in claim2cored's pinned map. Goal: <= 1 s after the burst (the last
// thread named and parked). Printed beside `ps -eLf` over the same threads (its wall time, the
// reference: what one full listing of the host costs right now) and the load average, with the
// daemon's ring-buffer drops and rescans (from its log).
// The daemon is a real process on a private socket, state dir and pin root; its ring buffer has
// the default size (derived from pid_max) unless --buffer BYTES. Needs root and bpffs; for 100k
// threads pid_max and threads-max must allow them (bench/thread-burst raises them).
// Run: build-<dir>/bench/host_burst_bench <claim2cored> [--threads N] [--buffer BYTES]
#include <bpf/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <linux/types.h>

#include "claim2core.grpc.pb.h"
#include "claim2core_abi.h"
#include "bench_daemon.hpp"
#include "thread_farm.hpp"

namespace pb = claim2core::v1;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

size_t count_lines(const std::string& path, const char* needle) {
  std::ifstream in(path);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos) ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <claim2cored> [--threads N] [--buffer BYTES]\n", argv[0]);
    return 2;
  }
  int n = 10000;
  std::string buffer;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) n = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--buffer") == 0) buffer = argv[i + 1];
  }
  if (geteuid() != 0) {
    std::printf("skipped: needs root (bpffs, BPF maps)\n");
    return 0;
  }
  std::string config = "policy_map_max_entries: " + std::to_string(std::max(131072, 2 * n)) + "\n";
  if (!buffer.empty()) config += "task_event_buffer: " + buffer + "\n";
  c2c::bench::BenchDaemon d(argv[1], "burst-bench", config);
  if (!d.ready()) {
    std::fprintf(stderr, "claim2cored did not start (see %s)\n", d.log().c_str());
    return 1;
  }
  const std::string log = d.log();
  const double ready_ms = d.ready_ms();
  int rc = 0;
  // An outside observer, like bpftool: the pins, not the daemon's fds.
  const int fd = bpf_obj_get(d.pin(C2C_POLICY_MAP_NAME).c_str());
  const int ring = bpf_obj_get(d.pin(C2C_EVENTS_MAP_NAME).c_str());
  bpf_map_info ring_info{};
  uint32_t len = sizeof ring_info;
  if (fd < 0 || ring < 0 || bpf_map_get_info_by_fd(ring, &ring_info, &len) != 0) {
    std::fprintf(stderr, "cannot open the daemon's pinned maps\n");
    return 1;
  }
  close(ring);
  {
    pb::UpsertPolicyRequest req;
    auto* p = req.mutable_policy()->mutable_node();
    p->set_name("burst");
    p->set_generation(1);
    p->add_node_names("bench-node");
    p->set_command_regex("^c2cburst$");
    p->set_priority(1);
    p->set_execution_time_ns(3'000'000);
    grpc::ClientContext ctx;
    pb::UpsertPolicyResponse resp;
    auto s = d.stub().UpsertPolicy(&ctx, req, &resp);
    if (!s.ok() || resp.intent().state() == pb::FAILED) {  // Pending (no task yet) or Sent: accepted
      std::fprintf(stderr, "UpsertPolicy failed: %s %s\n", s.error_message().c_str(), resp.intent().reason().c_str());
      return 1;
    }
  }
  const size_t drops_before = count_lines(log, "dropped");
  const size_t rescans_before = count_lines(log, "rescanning");

  // The farm is its own process: its threads are one tgid, and this process only watches.
  const auto t_start = Clock::now();
  c2c::bench::ForkedFarm farm(n, "c2cburst", "c2cburst-main");  // the main thread does not match
  if (!farm.wait_ready()) {
    std::fprintf(stderr, "the farm could not create %d threads (pid_max, threads-max, memory?)\n", n);
    rc = 1;
  }
  const auto t_burst = Clock::now();
  const uint32_t* tids = farm.tids();
  // Every tid's entry, in tid order of creation; polled gently (1 ms) to leave the CPUs to the daemon.
  size_t have = 0;
  Clock::time_point t_all{};
  const auto give_up = t_burst + std::chrono::seconds(60);
  while (rc == 0 && have < static_cast<size_t>(n)) {
    c2c_policy_value v{};
    if (bpf_map_lookup_elem(fd, &tids[have], &v) == 0 && v.slice_ns == 3'000'000) {
      ++have;
      continue;
    }
    if (Clock::now() > give_up) {
      std::fprintf(stderr, "after 60 s %zu of %d entries in the map\n", have, n);
      rc = 1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  t_all = Clock::now();
  // The reference, while the threads are alive: one `ps -eLf` over the host.
  const auto t_ps0 = Clock::now();
  const int ps_rc = std::system("ps -eLf > /dev/null");
  const double ps_ms = ms(Clock::now() - t_ps0);
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  farm.release();
  if (rc == 0) {
    const double after = ms(t_all - t_burst);
    std::printf("%d threads starting at once (each: fork + rename record), ring buffer %u bytes (daemon ready in %.0f ms)\n",
                n, ring_info.max_entries, ready_ms);
    std::printf("  burst (first pthread_create -> last thread named)     %9.1f ms\n", ms(t_burst - t_start));
    std::printf("  every matching entry in the map, after the burst      %9.1f ms   goal <= 1000 ms: %s\n", after,
                after <= 1000 ? "met" : "NOT met");
    std::printf("  reference: ps -eLf over the same host (exit %d)        %9.1f ms   ratio %.2fx\n", ps_rc, ps_ms,
                after / ps_ms);
    std::printf("  daemon: %zu ring-buffer drop warnings, %zu rescans for lost events during the run\n",
                count_lines(log, "dropped") - drops_before, count_lines(log, "rescanning") - rescans_before);
    std::printf("  load average %.2f %.2f %.2f on %u CPUs\n", load[0], load[1], load[2],
                std::thread::hardware_concurrency());
  }
  close(fd);
  if (rc == 0) d.remove_root();
  return rc;
}
