#include "vm_proc.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fstream>
#include <sstream>
#include <vector>

namespace c2c::vm {

std::optional<TaskStat> read_task_stat(pid_t tgid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(tgid) + "/task/" + std::to_string(tid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  std::vector<std::string> f;  // f[0] is field 3 (state)
  for (std::string tok; rest >> tok;) f.push_back(tok);
  if (f.size() < 37) return std::nullopt;
  TaskStat s;
  s.start_ticks = std::stoull(f[22 - 3]);
  s.processor = std::stoi(f[39 - 3]);
  return s;
}

uint64_t read_ctxt_switches(pid_t tgid, pid_t tid, bool voluntary) {
  std::ifstream in("/proc/" + std::to_string(tgid) + "/task/" + std::to_string(tid) + "/status");
  const std::string key = voluntary ? "voluntary_ctxt_switches:" : "nonvoluntary_ctxt_switches:";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size()));
  return 0;
}

uint64_t read_nr_migrations(pid_t tgid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(tgid) + "/task/" + std::to_string(tid) + "/sched");
  const std::string key = "se.nr_migrations";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return std::stoull(line.substr(colon + 1));
    }
  return 0;
}

std::string cpus_allowed_list() {
  std::ifstream in("/proc/self/status");
  const std::string key = "Cpus_allowed_list:";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      auto v = line.substr(key.size());
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "";
}

RunDelayReader::RunDelayReader() : fd_(open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}

RunDelayReader::~RunDelayReader() {
  if (fd_ >= 0) close(fd_);
}

std::optional<uint64_t> RunDelayReader::read() const {
  if (fd_ < 0) return std::nullopt;
  char buf[128];
  const ssize_t n = pread(fd_, buf, sizeof buf - 1, 0);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  // "<on-cpu ns> <run delay ns> <timeslices>"
  char* end = nullptr;
  std::strtoull(buf, &end, 10);
  if (end == buf || *end != ' ') return std::nullopt;
  char* start = end + 1;
  const uint64_t delay = std::strtoull(start, &end, 10);
  if (end == start) return std::nullopt;
  return delay;
}

pid_t gettid_now() { return static_cast<pid_t>(syscall(SYS_gettid)); }

uint64_t mono_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

void burn_until(uint64_t end_ns) {
  while (mono_ns() < end_ns) {
  }
}

void pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<unsigned>(cpu), &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    throw std::runtime_error("sched_setaffinity cpu " + std::to_string(cpu) + ": " + std::strerror(errno));
}

uint64_t percentile(std::vector<uint64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto idx = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

}  // namespace c2c::vm
