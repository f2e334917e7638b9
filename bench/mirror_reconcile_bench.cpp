// Full reconcile of 100,000 policy entries (read the whole map, diff, apply) on the real pinned
// map, and in the same run the alternatives: the mirror's per-key path (no batch syscalls) and
// one `bpftool map update` process per entry (a sample of invocations, extrapolated).
// Then the floor (issue 13): the mixed churn (1/2 add, 1/2 update, 1/2 delete) as raw syscalls on
// the same map -- one bpf_map_lookup_batch pass, one bpf_map_delete_batch, one
// bpf_map_update_batch, nothing else -- beside the mirror's apply of the same churn (deletes
// compared in the kernel, and compared against a read of the map) and its full reconcile, at 1k,
// 10k and 100k entries, with the load average. Goal at 100k: apply <= 100 ms and <= 2x the floor.
//
// Usage: mirror_reconcile_bench [entries=100000] [repetitions=5] [bpftool_sample=1000]
#include <bpf/bpf.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <ctime>
#include <string>
#include <vector>

#include "mirror/applier.hpp"
#include "mirror/policy_value.hpp"
#include "mirror/kernel_map.hpp"
#include "mirror/pinned_maps.hpp"
#include "mirror/synthetic.hpp"

extern char** environ;

using namespace c2c::mirror;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time of this process, user + system (the kernel's map work runs in our syscalls). On a
// loaded machine the wall time includes waiting for a CPU; the CPU time does not.
double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Timing {
  double read = 0, diff = 0, apply = 0;
  double cpu = 0;
  size_t ops = 0;
  double total() const { return read + diff + apply; }
};

// One full reconcile: read everything, diff against `desired`, apply. Fails loudly.
Timing reconcile(Applier& a, const DesiredTable& desired) {
  Timing t;
  const double c0 = cpu_ms();
  auto t0 = Clock::now();
  auto actual = a.read_actual();
  t.read = ms_since(t0);
  if (!actual) {
    std::fprintf(stderr, "read failed: %s\n", actual.error().c_str());
    std::exit(1);
  }
  t0 = Clock::now();
  c2c::Plan plan = diff_plan(desired, actual->entries, false);
  t.diff = ms_since(t0);
  t.ops = plan.ops.size();
  t0 = Clock::now();
  ApplyReport rep = a.apply(plan);
  t.apply = ms_since(t0);
  t.cpu = cpu_ms() - c0;
  if (!rep.ok()) {
    std::fprintf(stderr, "apply failed: %s\n", rep.error.c_str());
    std::exit(1);
  }
  return t;
}

void clear_map(Applier& a, PolicyMapIo& m) {
  auto actual = a.read_actual();
  if (!actual) std::exit(1);
  for (const auto& e : actual->entries) m.remove(e.tid);
}

Timing median(std::vector<Timing> v) {
  std::sort(v.begin(), v.end(), [](const Timing& x, const Timing& y) { return x.total() < y.total(); });
  return v[v.size() / 2];
}

void print(const char* name, const Timing& t) {
  std::printf("%-30s wall %7.1f ms  cpu %7.1f ms  (wall: read %.1f, diff %.1f, apply %.1f; %zu ops)\n", name,
              t.total(), t.cpu, t.read, t.diff, t.apply, t.ops);
}

std::string hex_bytes(const void* data, size_t n) {
  std::string out;
  const auto* b = static_cast<const unsigned char*>(data);
  char tmp[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(tmp, sizeof tmp, "%02x ", b[i]);
    out += tmp;
  }
  return out;
}

// Runs `bpftool map update pinned <pin> key hex .. value hex ..` once per entry of `sample`.
double bpftool_ms(const std::string& pin, const std::vector<std::pair<uint32_t, c2c_policy_value>>& sample) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  auto t0 = Clock::now();
  for (const auto& [tid, v] : sample) {
    std::vector<std::string> args{"bpftool", "map", "update", "pinned", pin, "key", "hex"};
    c2c_task_key k{tid};
    std::string kh = hex_bytes(&k, sizeof k), vh = hex_bytes(&v, sizeof v);
    for (char* tok = std::strtok(kh.data(), " "); tok != nullptr; tok = std::strtok(nullptr, " ")) args.push_back(tok);
    args.push_back("value");
    args.push_back("hex");
    for (char* tok = std::strtok(vh.data(), " "); tok != nullptr; tok = std::strtok(nullptr, " ")) args.push_back(tok);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid;
    if (posix_spawnp(&pid, "bpftool", &fa, nullptr, argv.data(), environ) != 0) {
      std::fprintf(stderr, "cannot run bpftool\n");
      std::exit(1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      std::fprintf(stderr, "bpftool failed for tid %u\n", tid);
      std::exit(1);
    }
  }
  double ms = ms_since(t0);
  posix_spawn_file_actions_destroy(&fa);
  return ms;
}

// The raw cost of the churn a -> b on a map that holds a (set up untimed): what any writer of
// this map must pay at least.
struct Floor {
  double read = 0, del = 0, write = 0;
  size_t deletes = 0, writes = 0;
  double ops() const { return del + write; }
  double total() const { return read + del + write; }
};

Floor raw_churn(int fd, Applier& applier, PolicyMapIo& map, const DesiredTable& a, const DesiredTable& b) {
  clear_map(applier, map);
  reconcile(applier, a);
  auto actual = applier.read_actual();
  if (!actual) std::exit(1);
  const c2c::Plan plan = diff_plan(b, actual->entries, false);
  std::vector<uint32_t> dk, wk;
  std::vector<c2c_policy_value> wv;
  for (const auto& op : plan.ops) {
    if (op.kind == c2c::PlanOp::Kind::Delete) {
      dk.push_back(op.tid);
    } else {
      wk.push_back(op.tid);
      wv.push_back(to_abi(op.value));
    }
  }
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  Floor f;
  f.deletes = dk.size();
  f.writes = wk.size();
  const size_t cap = actual->entries.size() + 1024;
  std::vector<uint32_t> keys(cap);
  std::vector<c2c_policy_value> vals(cap);
  uint64_t in = 0, out = 0;
  size_t got = 0;
  auto t0 = Clock::now();
  for (bool first = true;; first = false) {
    __u32 count = static_cast<__u32>(std::min<size_t>(8192, cap - got));
    const int rc = bpf_map_lookup_batch(fd, first ? nullptr : &in, &out, keys.data() + got, vals.data() + got, &count, &opts);
    got += count;
    if (rc != 0) {
      if (errno == ENOENT) break;
      std::fprintf(stderr, "raw lookup_batch: %s\n", std::strerror(errno));
      std::exit(1);
    }
    in = out;
  }
  f.read = ms_since(t0);
  t0 = Clock::now();
  __u32 c = static_cast<__u32>(dk.size());
  if (!dk.empty() && bpf_map_delete_batch(fd, dk.data(), &c, &opts) != 0) {
    std::fprintf(stderr, "raw delete_batch: %s after %u\n", std::strerror(errno), c);
    std::exit(1);
  }
  f.del = ms_since(t0);
  t0 = Clock::now();
  c = static_cast<__u32>(wk.size());
  if (!wk.empty() && bpf_map_update_batch(fd, wk.data(), wv.data(), &c, &opts) != 0) {
    std::fprintf(stderr, "raw update_batch: %s after %u\n", std::strerror(errno), c);
    std::exit(1);
  }
  f.write = ms_since(t0);
  if (got != actual->entries.size()) {
    std::fprintf(stderr, "raw lookup_batch read %zu of %zu entries\n", got, actual->entries.size());
    std::exit(1);
  }
  return f;
}

// Mirror churn vs the floor at each size, medians of `reps` interleaved runs. `applier` deletes
// with the kernel's compare-and-delete (PolicyCompareDelete), `read_applier` on the same map
// compares against a read of the whole map (the path without it), side by side.
void floor_table(int fd, Applier& applier, Applier& read_applier, PolicyMapIo& map, int reps) {
  std::printf("\nmixed churn (1/2 add, 1/2 update, 1/2 delete) vs the raw batch floor on the same map, median of %d:\n",
              reps);
  std::printf("%8s %10s %10s %12s %12s %10s %12s %12s\n", "entries", "floor ops", "floor all", "apply",
              "apply(read)", "all", "apply/ops", "all/floor all");
  bool met = false;
  for (uint32_t n : {1000u, 10000u, 100000u}) {
    if (n > map.max_entries()) continue;
    const DesiredTable a = synthetic_table(0, n, 1), b = synthetic_table(1, n, 2);
    std::vector<Floor> floors;
    std::vector<Timing> mirror, mirror_read;
    for (int r = 0; r < reps; ++r) {
      floors.push_back(raw_churn(fd, applier, map, a, b));
      clear_map(applier, map);
      reconcile(applier, a);
      mirror.push_back(reconcile(applier, b));
      clear_map(applier, map);
      reconcile(applier, a);
      mirror_read.push_back(reconcile(read_applier, b));
    }
    std::sort(floors.begin(), floors.end(), [](const Floor& x, const Floor& y) { return x.total() < y.total(); });
    const Floor f = floors[floors.size() / 2];
    const Timing m = median(mirror), mr = median(mirror_read);
    if (n == 100000)
      met = m.apply <= 100 && m.apply <= 2 * f.ops() && m.total() <= 2 * f.total();
    std::printf("%8u %8.2f ms %8.2f ms %10.2f ms %10.2f ms %8.2f ms %11.2fx %11.2fx%s\n", n, f.ops(), f.total(),
                m.apply, mr.apply, m.total(), m.apply / f.ops(), m.total() / f.total(),
                n == 100000 ? (met ? "   goal met" : "   goal NOT met") : "");
  }
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("(floor ops: delete_batch + update_batch; floor all: + one lookup_batch pass. apply: the mirror's "
              "apply of the churn's plan, what the daemon's incremental reconcile writes, deletes compared in the "
              "kernel; apply(read): the same with deletes compared against a read of the whole map, the path "
              "without the kernel program; all: read + diff + apply, the periodic full read-back's reconcile. "
              "Goal at 100k: apply <= 100 ms and <= 2x floor ops, all <= 2x floor all) load average %.2f %.2f %.2f "
              "on %ld CPUs\n",
              load[0], load[1], load[2], sysconf(_SC_NPROCESSORS_ONLN));
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10)) : 100000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const size_t sample = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1000;
  if (geteuid() != 0) {
    std::fprintf(stderr, "mirror_reconcile_bench: needs root and bpffs\n");
    return 77;
  }
  PinOptions opts;
  opts.pin_root = "/sys/fs/bpf/c2c-bench-mirror-" + std::to_string(getpid());
  auto maps = PinnedMaps::open(opts);
  if (!maps) {
    std::fprintf(stderr, "%s\n", maps.error().c_str());
    return 1;
  }
  if (maps.value()->compare_delete() == nullptr) {
    std::fprintf(stderr, "%s\n", maps.value()->compare_delete_error().c_str());
    return 1;
  }
  KernelPolicyMap map(maps.value()->policy_fd(), maps.value()->policy_max_entries(), maps.value()->compare_delete());
  KernelPolicyMap map_without(maps.value()->policy_fd(), maps.value()->policy_max_entries());
  Applier batched(map);
  Applier read_compare(map_without);
  ApplyOptions per_key_opts;
  per_key_opts.use_batch = false;
  Applier per_key(map, per_key_opts);

  const DesiredTable a = synthetic_table(0, n, 1), b = synthetic_table(1, n, 2);
  std::printf("mirror reconcile benchmark: %u entries, %d repetitions (median shown), map max %u\n", n, reps,
              map.max_entries());

  std::vector<Timing> cold, steady, churn, cold_pk, churn_pk;
  for (int r = 0; r < reps; ++r) {
    clear_map(batched, map);
    cold.push_back(reconcile(batched, a));    // empty map -> n adds
    steady.push_back(reconcile(batched, a));  // nothing to do: read + diff only
    churn.push_back(reconcile(batched, b));   // n/2 deletes, n/2 updates, n/2 adds
    clear_map(batched, map);
    cold_pk.push_back(reconcile(per_key, a));
    churn_pk.push_back(reconcile(per_key, b));
  }
  const Timing c = median(cold), s = median(steady), ch = median(churn);
  print("cold (empty map, batched)", c);
  print("steady (no change, batched)", s);
  print("churn (seed change, batched)", ch);
  print("cold (empty map, per key)", median(cold_pk));
  print("churn (seed change, per key)", median(churn_pk));

  // bpftool: one process per entry, a sample of the same table, extrapolated to n.
  clear_map(batched, map);
  std::vector<std::pair<uint32_t, c2c_policy_value>> picks;
  for (const auto& [tid, v] : a) {
    if (picks.size() >= sample) break;
    picks.emplace_back(tid, to_abi(v));
  }
  const double bt = bpftool_ms(opts.pin_root + "/" C2C_POLICY_MAP_NAME, picks);
  const double per_call = bt / static_cast<double>(picks.size());
  const double extrapolated = per_call * n;
  std::printf("bpftool map update, %zu invocations  %9.1f ms  (%.3f ms each; extrapolated to %u entries: %.0f ms)\n",
              picks.size(), bt, per_call, n, extrapolated);
  std::printf("ratio bpftool-per-entry (extrapolated) / mirror cold reconcile: %.0fx\n", extrapolated / c.total());
  std::printf("ratio mirror per-key / mirror batched (cold): %.2fx\n", median(cold_pk).total() / c.total());
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("goal full reconcile of %u entries <= 100 ms (wall): cold %s, steady %s, churn %s; "
              "load average during the run %.1f on %ld CPUs\n",
              n, c.total() <= 100 ? "met" : "NOT met", s.total() <= 100 ? "met" : "NOT met",
              ch.total() <= 100 ? "met" : "NOT met", load[0], sysconf(_SC_NPROCESSORS_ONLN));

  floor_table(maps.value()->policy_fd(), batched, read_compare, map, reps);

  maps.value().reset();
  PinnedMaps::remove_pins(opts.pin_root);
  return 0;
}
