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

namespace c2c::bench {

inline std::string describe_threads(pid_t pid) {
  std::ostringstream out;
  std::error_code ec;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& t : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream stat(t.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string field, state, policy;
    rest >> state;
    // Fields after the state: ppid (4) ... policy is field 41 of stat, the 39th after the state.
    for (int i = 4; i <= 41 && rest >> field; ++i)
      if (i == 41) policy = field;
    std::ifstream wchan_file(t.path() / "wchan");
    std::string wchan;
    std::getline(wchan_file, wchan);
    out << " " << line.substr(open + 1, close - open - 1) << ":" << state << "/p" << policy << "/"
        << (wchan.empty() ? "-" : wchan);
  }
  return out.str();
}

}  // namespace c2c::bench
