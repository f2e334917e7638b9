#include "host/process_title.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <iterator>
#include <system_error>

#include <linux/types.h>

#include "core/model.hpp"
#include "host/procfs_walker.hpp"
#include "task_title_hash.h"

namespace c2c::host {

std::optional<std::string> read_process_title(const std::filesystem::path& proc_root, uint32_t tgid) {
  const auto dir = proc_root / std::to_string(tgid);
  int fd = ::open((dir / "cmdline").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  // One read of kMaxTitleBytes: argv[0] ends at the first NUL; a longer one is cut (the kernel
  // hands out the command line in one piece up to a page, so a short read is the whole of it).
  char buf[kMaxTitleBytes];
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n < 0) return std::nullopt;
  std::string title(buf, static_cast<size_t>(n));
  if (auto nul = title.find('\0'); nul != std::string::npos) title.resize(nul);
  if (!title.empty()) return title;
  // No argv[0]: a kernel thread (no executable either) or a process that cleared its argv.
  std::error_code ec;
  auto exe = std::filesystem::read_symlink(dir / "exe", ec);
  if (ec) {
    if (!std::filesystem::exists(dir, ec)) return std::nullopt;
    return std::string();
  }
  std::string path = exe.string();
  if (path.size() > kMaxTitleBytes) path.resize(kMaxTitleBytes);
  return path;
}

static_assert(C2C_TITLE_HASH_BYTES == kMaxTitleBytes, "the rename record hashes the title as it is read here");

uint32_t title_hash(std::string_view title) {
  __u32 h = C2C_TITLE_HASH_SEED;
  for (unsigned char c : title) h = c2c_title_hash_step(h, c);
  return c2c_title_hash_final(h);
}

std::string ProcessTitles::read(uint32_t tgid) {
  ++reads_;
  return read_process_title(proc_root_, tgid).value_or(std::string());
}

std::string ProcessTitles::get(uint32_t tgid, uint64_t leader_start) {
  auto it = cache_.find(tgid);
  if (it != cache_.end()) {
    if (leader_start == 0 || it->second.leader_start == 0 || it->second.leader_start == leader_start) {
      if (it->second.leader_start == 0) it->second.leader_start = leader_start;
      return it->second.title;
    }
  }
  std::string title = read(tgid);
  const uint32_t hash = title_hash(title);
  cache_[tgid] = Entry{title, hash, leader_start, std::nullopt};
  return title;
}

bool ProcessTitles::refresh(uint32_t tgid, uint64_t now_ns) {
  std::string now = read(tgid);
  auto it = cache_.find(tgid);
  if (it != cache_.end() && it->second.title == now) {
    it->second.renamed_read_ns = now_ns;
    return false;
  }
  uint64_t start = it != cache_.end() ? it->second.leader_start : 0;
  const uint32_t hash = title_hash(now);
  cache_[tgid] = Entry{std::move(now), hash, start, now_ns};
  return true;
}

std::vector<TaskInfo> ProcessTitles::read_after_rename(uint32_t tgid, uint64_t now_ns) {
  owed_.erase(tgid);
  if (!refresh(tgid, now_ns)) return {};
  ProcfsWalkOptions opts;
  opts.proc_root = proc_root_;
  opts.only_tgid = tgid;
  return walk_procfs(opts);
}

std::vector<TaskInfo> ProcessTitles::refresh_owed(uint64_t now_ns) {
  std::vector<uint32_t> due;
  for (const auto& [tgid, at] : owed_)
    if (at <= now_ns) due.push_back(tgid);
  std::vector<TaskInfo> out;
  for (uint32_t tgid : due) {
    auto threads = read_after_rename(tgid, now_ns);
    out.insert(out.end(), std::make_move_iterator(threads.begin()), std::make_move_iterator(threads.end()));
  }
  return out;
}

std::optional<uint64_t> ProcessTitles::next_owed() const {
  std::optional<uint64_t> next;
  for (const auto& [tgid, at] : owed_)
    if (!next || at < *next) next = at;
  return next;
}

}  // namespace c2c::host

namespace c2c::host {

std::vector<TaskInfo> ProcessTitles::after_event(const TaskEvent& e, uint64_t now_ns) {
  const uint32_t tgid = e.task.tgid;
  switch (e.kind) {
    case TaskEventKind::Exec:
      forget(tgid);
      break;
    case TaskEventKind::New:
    case TaskEventKind::Exit:
      if (e.task.tid == tgid) forget(tgid);
      break;
    case TaskEventKind::Rename: {
      auto it = cache_.find(tgid);
      // The record says what the title is now: the same as the cached one needs no read. Not
      // for the leader: a program that retitles itself may rename its main thread before it
      // rewrites argv (systemd's rename_process does), so the hash taken at the rename can be the
      // old title's; the leader's renames are read as before.
      if (e.task.tid != tgid && e.title_hash != 0 && it != cache_.end() && it->second.hash == e.title_hash) break;
      if (it != cache_.end() && it->second.renamed_read_ns && now_ns - *it->second.renamed_read_ns < kRenameReadInterval) {
        owed_.try_emplace(tgid, *it->second.renamed_read_ns + kRenameReadInterval);
        break;
      }
      return read_after_rename(tgid, now_ns);
    }
    case TaskEventKind::Snapshot:
      break;
  }
  return {};
}

}  // namespace c2c::host
