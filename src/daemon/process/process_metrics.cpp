#include "daemon/process/process_metrics.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace c2c::daemon {

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "btime <seconds since the epoch>" of /proc/stat: boot time, for the start time.
double boot_time() {
  std::istringstream in(read_file("/proc/stat"));
  std::string key;
  double v = 0;
  while (in >> key) {
    if (key == "btime" && in >> v) return v;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

// VmRSS of /proc/self/status, in bytes.
double resident_bytes() {
  std::istringstream in(read_file("/proc/self/status"));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;
  return 0;
}

double open_fds() {
  std::error_code ec;
  double n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++n;
  return n;
}

prometheus::MetricFamily family(const char* name, const char* help, prometheus::MetricType type, double v) {
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter)
    m.counter.value = v;
  else
    m.gauge.value = v;
  return prometheus::MetricFamily{name, help, type, {m}};
}

}  // namespace

std::optional<ProcStatTimes> parse_proc_stat(const std::string& text) {
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(close + 1));
  std::vector<std::string> f;  // f[0] is field 3 (state)
  for (std::string w; in >> w;) f.push_back(w);
  if (f.size() < 20) return std::nullopt;
  try {
    ProcStatTimes t;
    t.cpu_ticks = std::stoull(f[11]) + std::stoull(f[12]);  // fields 14, 15
    t.start_ticks = std::stoull(f[19]);                       // field 22
    return t;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (auto t = parse_proc_stat(read_file("/proc/self/stat")); t && hz > 0) {
    out.push_back(family("process_cpu_seconds_total", "User and system CPU time spent in seconds", MetricType::Counter,
                         static_cast<double>(t->cpu_ticks) / hz));
    out.push_back(family("process_start_time_seconds", "Start time of the process since the epoch in seconds",
                         MetricType::Gauge, boot_time() + static_cast<double>(t->start_ticks) / hz));
  }
  out.push_back(family("process_resident_memory_bytes", "Resident memory size in bytes", MetricType::Gauge,
                       resident_bytes()));
  out.push_back(family("process_open_fds", "Number of open file descriptors", MetricType::Gauge, open_fds()));
  return out;
}

}  // namespace c2c::daemon
