#include "exp_stats.hpp"

#include "vm_proc.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace c2c::exp {

uint64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

static uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void Samples::write(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("--samples " + path + ": cannot write");
  for (const auto& [name, xs] : by_name_) {
    for (size_t i = 0; i < xs.size(); i += 256) {
      out << name;
      for (size_t k = i; k < std::min(xs.size(), i + 256); ++k) {
        char buf[32];
        std::snprintf(buf, sizeof buf, " %.1f", xs[k]);
        out << buf;
      }
      out << '\n';
    }
  }
}

nlohmann::json summary(std::vector<double> xs) {
  if (xs.empty()) return {{"n", 0}};
  std::sort(xs.begin(), xs.end());
  // Nearest rank: the smallest sample with at least q of the samples at or below it.
  const auto pct = [&](double q) {
    const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(xs.size())));
    return xs[std::clamp<size_t>(rank, 1, xs.size()) - 1];
  };
  const double mean = std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
  return {{"n", xs.size()}, {"mean_us", mean}, {"p50_us", pct(0.5)}, {"p95_us", pct(0.95)},
          {"p99_us", pct(0.99)}, {"p999_us", pct(0.999)}, {"max_us", xs.back()}};
}

uint64_t CtxSwitches::now() {
  const pid_t tid = c2c::vm::gettid_now();
  return c2c::vm::read_ctxt_switches(getpid(), tid, true) + c2c::vm::read_ctxt_switches(getpid(), tid, false);
}

std::set<int> parse_cpu_list(const std::string& list) {
  std::set<int> out;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty() || part == "\n") continue;
    const auto dash = part.find('-');
    try {
      const int lo = std::stoi(part.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
      if (lo < 0 || hi < lo) throw std::invalid_argument(part);
      for (int c = lo; c <= hi; ++c) out.insert(c);
    } catch (const std::exception&) {
      throw std::invalid_argument("--local-cpus: '" + part + "' is not a CPU or CPU range");
    }
  }
  return out;
}

std::map<int, int> cpu_nodes(const std::string& sysfs) {
  namespace fs = std::filesystem;
  std::map<int, int> out;
  std::error_code ec;
  for (const auto& cpu : fs::directory_iterator(sysfs, ec)) {
    const std::string n = cpu.path().filename();
    if (n.rfind("cpu", 0) != 0 || n.size() < 4 || !std::isdigit(static_cast<unsigned char>(n[3]))) continue;
    int node = 0;
    for (const auto& e : fs::directory_iterator(cpu.path(), ec)) {
      const std::string m = e.path().filename();
      if (m.rfind("node", 0) == 0 && m.size() > 4 && std::isdigit(static_cast<unsigned char>(m[4])))
        node = std::stoi(m.substr(4));
    }
    out[std::stoi(n.substr(3))] = node;
  }
  return out;
}

Locality::Locality(const std::string& local_cpus) : node_of_(cpu_nodes()) {
  if (!local_cpus.empty()) {
    local_ = parse_cpu_list(local_cpus);
    have_local_ = true;
  }
}

void Locality::begin() {
  cpu_ = sched_getcpu();
  last_cpu_ns_ = thread_cpu_ns();
}

void Locality::step() {
  const uint64_t t = thread_cpu_ns();
  const int cpu = sched_getcpu();
  const uint64_t d = t - last_cpu_ns_;
  last_cpu_ns_ = t;
  total_ns_ += d;
  ns_by_cpu_[cpu] += d;
  if (local_.count(cpu)) local_ns_ += d;
  if (cpu != cpu_) {
    ++migrations_;
    const auto a = node_of_.find(cpu_), b = node_of_.find(cpu);
    if (a != node_of_.end() && b != node_of_.end() && a->second != b->second) ++numa_migrations_;
  }
  cpu_ = cpu;
}

nlohmann::json Locality::json() const {
  std::set<int> nodes;
  for (const auto& [cpu, node] : node_of_) nodes.insert(node);
  nlohmann::json by_cpu = nlohmann::json::object();
  for (const auto& [cpu, ns] : ns_by_cpu_) by_cpu[std::to_string(cpu)] = static_cast<double>(ns) / 1e6;
  return {{"migrations", migrations_},
          {"numa_migrations", numa_migrations_},
          {"numa_nodes", nodes.size()},
          {"cpu_ms_by_cpu", by_cpu},
          {"device_local_share", have_local_ && total_ns_ ? nlohmann::json(static_cast<double>(local_ns_) /
                                                                            static_cast<double>(total_ns_))
                                                          : nlohmann::json(nullptr)}};
}

}  // namespace c2c::exp
