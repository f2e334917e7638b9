#include "vm_prefer.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "host/topology.hpp"
#include "sched/loader.hpp"
#include "vm_policy.hpp"
#include "vm_proc.hpp"
#include "vm_task_counters.hpp"

using nlohmann::json;

namespace c2c::vm {

namespace {

// A CPU-time load on one CPU: burns busy_us, sleeps idle_us, until stopped. Has no policy.
class Hog {
 public:
  Hog(int cpu, int busy_us, int idle_us) {
    t_ = std::thread([=, this] {
      pin_self(cpu);
      while (!stop_) {
        burn_until(mono_ns() + static_cast<uint64_t>(busy_us) * 1000ull);
        if (idle_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(idle_us));
      }
    });
  }
  ~Hog() {
    stop_ = true;
    t_.join();
  }
  Hog(const Hog&) = delete;
  Hog& operator=(const Hog&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread t_;
};

// One probe run: a child process that wakes every 1 ms and works 200 us, for duration_ms, under
// spec (or none). Its counters are read while it is still alive (it waits for the parent's
// second byte before it exits): task storage is freed when a task is reaped.
json probe(const PolicySpec* spec, int duration_ms, int device_node) {
  int go[2], done[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(done, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    char b = 0;
    if (read(go[0], &b, 1) != 1) _exit(2);
    const uint64_t end = mono_ns() + static_cast<uint64_t>(duration_ms) * 1000000ull;
    while (mono_ns() < end) {
      std::this_thread::sleep_for(std::chrono::microseconds(1000));
      burn_until(mono_ns() + 200'000);
    }
    if (write(done[1], "d", 1) != 1) _exit(2);
    if (read(go[0], &b, 1) != 1) _exit(2);
    _exit(0);
  }
  close(go[0]);
  close(done[1]);
  std::unique_ptr<PolicyMap> map;
  if (spec) {
    map = std::make_unique<PolicyMap>();
    map->put_task(child, child, *spec);
  }
  const uint64_t mig0 = read_nr_migrations(child, child);
  // Counted from here: the fork and the wait for "go" ran before the policy was in force.
  std::string why;
  const auto cnt0 = read_task_counters(child, C2C_PIN_ROOT, &why);
  char b = 'g';
  bool ok = write(go[1], &b, 1) == 1 && read(done[0], &b, 1) == 1;
  auto cnt = read_task_counters(child, C2C_PIN_ROOT, &why);
  if (cnt && cnt0) *cnt = counters_since(*cnt, *cnt0);
  else cnt.reset();
  const uint64_t mig1 = read_nr_migrations(child, child);
  ok = write(go[1], &b, 1) == 1 && ok;
  int status = 0;
  waitpid(child, &status, 0);
  if (map) map->del(static_cast<uint32_t>(child));
  close(go[1]);
  close(done[0]);
  json j{{"policy", spec != nullptr}, {"nr_migrations_proc", mig1 - mig0},
         {"exited", ok && WIFEXITED(status) && WEXITSTATUS(status) == 0}};
  if (cnt) j["counters"] = counters_json(*cnt, device_node);
  else j["counters_error"] = why;
  return j;
}

double share(const json& run) {
  return run.contains("counters") ? run["counters"].value("device_local_share", 0.0) : 0.0;
}

uint64_t counter(const json& run, const char* name) {
  return run.contains("counters") ? run["counters"].value(name, uint64_t{0}) : 0;
}

}  // namespace

int cmd_prefer(const std::string& device, int duration_ms) {
  host::ParseError perr;
  const auto topo = host::read_topology("/sys", &perr);
  if (!topo) throw std::runtime_error("topology: " + perr.to_string());
  const auto dev = topo->pci.find(device);
  if (dev == topo->pci.end()) throw std::runtime_error("device " + device + ": not in /sys/bus/pci/devices");
  const int node = dev->second.numa_node;
  // The device-local CPUs as the product computes them: the host plane's cpus_local_to (the
  // device's local_cpulist or its NUMA node's CPUs), which the core's preferSameNUMA /
  // preferSamePCIeRoot narrow `preferred` to.
  host::DeviceLocation where;
  where.pci_bus_id = device;
  const auto local = host::cpus_local_to(*topo, where, &perr);
  if (!local || local->empty() || node < 0)
    throw std::runtime_error("device " + device + ": no NUMA node or local CPUs (" + perr.message + ")");
  const int local_cpu = static_cast<int>(local->cpus().front());

  PolicySpec lc;
  lc.exec_class = C2C_CLASS_LATENCY_CRITICAL;
  lc.boost_ns = 60'000'000'000ull;
  lc.allowed = topo->online;
  lc.preferred = *local;
  PolicySpec normal = lc;
  normal.exec_class = C2C_CLASS_NORMAL;
  normal.boost_ns = 0;
  // The baseline has an entry without CPUs (the scheduler keeps counters only for a task with an
  // entry): scheduled as without a policy, on whichever CPU is idle.
  PolicySpec no_preference;
  no_preference.exec_class = C2C_CLASS_NORMAL;

  const c2c_stats s0 = sched::read_pinned_stats();
  json baseline, boosted, unboosted, saturated;
  {
    // The device-local CPU is busy half the time, in bursts of 1 ms: not saturated (a queued
    // probe waits less than the spill bound, C2C_PREFER_SPILL_NS). Without a preference the probe
    // wakes on whichever CPU is idle; with one it must stay on the local CPU.
    Hog hog(local_cpu, 1000, 1000);
    baseline = probe(&no_preference, duration_ms, node);
    boosted = probe(&lc, duration_ms, node);
    unboosted = probe(&normal, duration_ms, node);
  }
  {
    // Saturated: a CPU hog never leaves the local CPU. The unboosted probe must spill to another
    // CPU of allowed once it waited the bound (C2C_PREFER_SPILL_NS): counted as spills, as CPU
    // and NUMA migrations.
    Hog hog(local_cpu, 100000, 0);
    saturated = probe(&normal, duration_ms, node);
  }
  const c2c_stats s1 = sched::read_pinned_stats();

  const bool exited = baseline["exited"] && boosted["exited"] && unboosted["exited"] && saturated["exited"];
  // The boosted probe (a latency-critical role, what preferSameNUMA serves) must keep 95 % on the
  // device's node. The unboosted one is reported, not judged: it waits in a shared queue, and a
  // host stall of the preferred vCPU longer than the bound spills it by design, so its share
  // follows the host's load (94 %, 90 %, 73 % measured at host load 15, 10, 9), not the scheduler.
  const bool honoured = share(boosted) >= 0.95;
  const bool contrast = share(baseline) < 0.9;  // else the load did not make the preference matter
  const bool spilled = counter(saturated, "spills") > 0 && counter(saturated, "numa_migrations") > 0 &&
                       counter(saturated, "migrations") >= counter(saturated, "numa_migrations");
  const bool pass = exited && honoured && contrast && spilled;
  json topo_j{{"device", device}, {"numa_node", node}, {"pcie_root", dev->second.pcie_root},
              {"local_cpus", local->to_string()}};
  json nodes = json::object();
  for (const auto& [n, cpus] : topo->numa_cpus) nodes[std::to_string(n)] = cpus.to_string();
  topo_j["numa_cpus"] = nodes;
  json j{{"scenario", "prefer"},
         {"topology", topo_j},
         {"duration_ms", duration_ms},
         {"device_local_share", {{"baseline", share(baseline)}, {"lc_boosted", share(boosted)},
                                 {"normal", share(unboosted)}, {"saturated", share(saturated)}}},
         {"preferred_spills", s1.preferred_spills - s0.preferred_spills},
         {"runs", {{"baseline", baseline}, {"lc_boosted", boosted}, {"normal", unboosted}, {"saturated", saturated}}},
         {"honoured", honoured},
         {"contrast", contrast},
         {"spilled", spilled},
         {"pass", pass}};
  std::cout << j.dump() << std::endl;
  return pass ? 0 : 1;
}

}  // namespace c2c::vm
