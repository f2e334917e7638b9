// The process title (issue #15): argv[0] of /proc/<tgid>/cmdline, which setproctitle() rewrites in
// place (stock vLLM: "VLLM::EngineCore_DP0" while every thread's comm is cut to "VLLM::EngineCor"),
// or the executable's path when argv[0] is empty (a process that cleared its argv). A bounded
// read: at most kMaxTitleBytes (the core's bound on Task::title), never the whole command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/task_info.hpp"
#include "host/task_record.hpp"

namespace c2c::host {

// nullopt when the process is gone; "" for a kernel thread (no command line, no executable).
std::optional<std::string> read_process_title(const std::filesystem::path& proc_root, uint32_t tgid);

// Titles read once per process and kept until the caller says they may have changed: the task
// events that can change one (exec, a thread rename: setproctitle renames the calling thread),
// the leader's exit, and each rescan (which re-reads every process once: the bound for an argv
// rewrite that fires no event). Keyed by tgid plus the leader's start time when the caller knows
// it (a reused tgid under a new leader is read again). Not thread-safe (the daemon's loop thread).
class ProcessTitles {
 public:
  explicit ProcessTitles(std::filesystem::path proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  // The cached title, read on a miss. leader_start 0: unknown (any cached entry of tgid serves).
  std::string get(uint32_t tgid, uint64_t leader_start = 0);
  // Read again now; true when the title differs from the cached one (or none was cached).
  bool refresh(uint32_t tgid);
  void forget(uint32_t tgid) { cache_.erase(tgid); }
  // What a task event means for the cache: exec, a new process (a reused tgid) and the leader's
  // exit forget the title; a rename (setproctitle renames the calling thread) reads it again and,
  // when it changed, returns every thread of the process (one walk of <proc>/<tgid>/task, only
  // then), which must be sent again so that each carries the new title.
  std::vector<TaskInfo> after_event(const TaskEvent& e);
  void clear() { cache_.clear(); }
  size_t size() const { return cache_.size(); }
  uint64_t reads() const { return reads_; }  // cmdline reads so far (tests: once per process)

 private:
  struct Entry {
    std::string title;
    uint64_t leader_start = 0;
  };
  std::string read(uint32_t tgid);
  std::filesystem::path proc_root_;
  std::unordered_map<uint32_t, Entry> cache_;
  uint64_t reads_ = 0;
};

}  // namespace c2c::host
