// The process title (issue #15): argv[0] of /proc/<tgid>/cmdline, which setproctitle() rewrites in
// place (stock vLLM: "VLLM::EngineCore_DP0" while every thread's comm is cut to "VLLM::EngineCor"),
// or the executable's path when argv[0] is empty (a process that cleared its argv). A bounded
// read: at most kMaxTitleBytes (the core's bound on Task::title), never the whole command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/task_info.hpp"
#include "host/task_record.hpp"

namespace c2c::host {

// nullopt when the process is gone; "" for a kernel thread (no command line, no executable).
std::optional<std::string> read_process_title(const std::filesystem::path& proc_root, uint32_t tgid);

// The hash a rename record carries for a title (bpf/task_title_hash.h; never 0).
uint32_t title_hash(std::string_view title);

// Titles read once per process and kept until the caller says they may have changed: the task
// events that can change one (exec, a thread rename: setproctitle renames the calling thread),
// the leader's exit, and each rescan (which re-reads every process once: the bound for an argv
// rewrite that fires no event). Keyed by tgid plus the leader's start time when the caller knows
// it (a reused tgid under a new leader is read again). A rename re-reads at most once per
// kRenameReadInterval per process: a process whose threads rename themselves one after another
// (a thread pool naming its workers; at 100k tasks this read was 17 % of the daemon's CPU per
// task event, issue #13) costs one read per interval, not one per thread. The first rename after a
// quiet interval is read at once (setproctitle then reaches the map without delay); a later one
// leaves the read owed, due at the end of the interval (refresh_owed, next_owed). A rename of a
// thread other than the leader whose record carries the title's hash (TaskEvent::title_hash,
// computed by the task-event program from the renaming process's argv[0]) equal to the cached
// title's needs no read at all: a thread pool that names its workers costs no read of the command
// line. The leader's renames read as above (a program may rename its main thread before it
// rewrites argv, so its hash can be the old title's). Not thread-safe
// (the daemon's loop thread). Clocks are parameters (any monotonic clock, one per instance).
class ProcessTitles {
 public:
  explicit ProcessTitles(std::filesystem::path proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  // The cached title, read on a miss. leader_start 0: unknown (any cached entry of tgid serves).
  std::string get(uint32_t tgid, uint64_t leader_start = 0);
  static constexpr uint64_t kRenameReadInterval = 10'000'000;  // ns
  // Read again now; true when the title differs from the cached one (or none was cached).
  bool refresh(uint32_t tgid, uint64_t now_ns);
  void forget(uint32_t tgid) {
    cache_.erase(tgid);
    owed_.erase(tgid);
  }
  // What a task event means for the cache: exec, a new process (a reused tgid) and the leader's
  // exit forget the title; a rename (setproctitle renames the calling thread) reads it again and,
  // when it changed, returns every thread of the process (one walk of <proc>/<tgid>/task, only
  // then), which must be sent again so that each carries the new title. A rename within
  // kRenameReadInterval of the process's last rename read only owes the read.
  std::vector<TaskInfo> after_event(const TaskEvent& e, uint64_t now_ns);
  // The owed reads that are due by now_ns: the threads of every process whose title changed.
  std::vector<TaskInfo> refresh_owed(uint64_t now_ns);
  // When the earliest owed read falls due; nullopt when none is owed.
  std::optional<uint64_t> next_owed() const;
  void clear() {
    cache_.clear();
    owed_.clear();
  }
  size_t size() const { return cache_.size(); }
  uint64_t reads() const { return reads_; }  // cmdline reads so far (tests: once per process)

 private:
  struct Entry {
    std::string title;
    uint32_t hash = 0;  // title_hash(title)
    uint64_t leader_start = 0;
    std::optional<uint64_t> renamed_read_ns;  // when a rename last read it
  };
  std::string read(uint32_t tgid);
  std::vector<TaskInfo> read_after_rename(uint32_t tgid, uint64_t now_ns);
  std::filesystem::path proc_root_;
  std::unordered_map<uint32_t, Entry> cache_;
  std::unordered_map<uint32_t, uint64_t> owed_;  // tgid -> when its owed read falls due
  uint64_t reads_ = 0;
};

}  // namespace c2c::host
