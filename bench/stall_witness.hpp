// What a process's threads were doing at one instant, for a sample that took far longer than the
// rest (a new thread that waited past 100 ms for its entry): each thread's name, scheduler state
// (R running or runnable, S sleeping, D uninterruptible), policy (0 other, 1 FIFO) and kernel
// wait channel, from /proc/<pid>/task. Tells a loop that was never woken (S in ep_poll) from one
// that was starved of the CPU (R) or blocked elsewhere.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "proc_stat_fields.hpp"

namespace c2c::bench {

inline std::string describe_threads(pid_t pid) {
  std::ostringstream out;
  std::error_code ec;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& t : std::filesystem::directory_iterator(dir, ec)) {
    std::string name;
    const auto fields = stat_fields(t.path() / "stat", &name);
    if (fields.empty()) continue;
    const std::string policy = fields.size() > 38 ? fields[38] : "?";  // field 41
    std::ifstream wchan_file(t.path() / "wchan");
    std::string wchan;
    std::getline(wchan_file, wchan);
    out << " " << name << ":" << fields[0] << "/p" << policy << "/" << (wchan.empty() ? "-" : wchan);
  }
  return out.str();
}

}  // namespace c2c::bench
