#include "host/procfs_walker.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "host/proc_stat.hpp"

namespace c2c::host {

namespace {

// Reads a small file relative to a directory fd into buf; returns the length or -1.
ssize_t read_at(int dirfd, const char* name, char* buf, size_t cap) {
  const int fd = ::openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = 0;
  while (len < cap) {
    const ssize_t n = ::read(fd, buf + len, cap - len);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return -1;
    }
    if (n == 0) break;
    len += static_cast<size_t>(n);
  }
  ::close(fd);
  return static_cast<ssize_t>(len);
}

std::optional<uint32_t> numeric_name(const char* name) {
  const auto v = parse_u64(name);
  if (!v || *v == 0 || *v > 0xffffffffu) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

enum class ReadResult { Ok, Gone, Malformed };

ReadResult read_task_at(int taskfd, uint32_t tgid, uint32_t tid, TaskInfo& out, ParseError* err) {
  char buf[4096];
  const ssize_t n = read_at(taskfd, "stat", buf, sizeof buf);
  if (n <= 0) return ReadResult::Gone;
  const auto st = parse_stat(std::string_view(buf, static_cast<size_t>(n)), err);
  if (!st) return ReadResult::Malformed;
  if (st->pid != tid) {
    set_error(err, "stat.pid", "is " + std::to_string(st->pid) + " in the file of tid " + std::to_string(tid));
    return ReadResult::Malformed;
  }
  const ssize_t c = read_at(taskfd, "comm", buf, sizeof buf);
  if (c < 0) return ReadResult::Gone;
  size_t clen = static_cast<size_t>(c);
  if (clen > 0 && buf[clen - 1] == '\n') --clen;
  out.tid = tid;
  out.tgid = tgid;
  out.start_ticks = st->start_ticks;
  out.comm.assign(buf, clen);
  return ReadResult::Ok;
}

}  // namespace

std::optional<TaskInfo> read_proc_task(const std::filesystem::path& proc_root, uint32_t tgid, uint32_t tid,
                                       ParseError* err) {
  const auto dir = proc_root / std::to_string(tgid) / "task" / std::to_string(tid);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  TaskInfo t;
  const ReadResult r = read_task_at(fd, tgid, tid, t, err);
  ::close(fd);
  if (r != ReadResult::Ok) return std::nullopt;
  return t;
}

std::vector<uint32_t> list_proc_tgids(const std::filesystem::path& proc_root) {
  std::vector<uint32_t> out;
  DIR* d = ::opendir(proc_root.c_str());
  if (d == nullptr) return out;
  while (const dirent* pe = ::readdir(d))
    if (const auto tgid = numeric_name(pe->d_name)) out.push_back(*tgid);
  ::closedir(d);
  return out;
}

std::vector<TaskInfo> walk_procfs(const ProcfsWalkOptions& opts, ProcfsWalkStats* stats) {
  ProcfsWalkStats local;
  ProcfsWalkStats& s = stats != nullptr ? *stats : local;
  s = ProcfsWalkStats{};
  std::vector<TaskInfo> out;
  // Many threads share a cgroup: read each cgroup's cpuset once per walk.
  std::unordered_map<std::string, std::optional<CpuSet>> cpuset_cache;

  auto note_malformed = [&](const ParseError& e) {
    if (s.malformed++ == 0) s.first_error = e;
  };

  auto walk_process = [&](int procfd, uint32_t tgid) {
    const int taskdirfd = ::openat(procfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (taskdirfd < 0) return;
    DIR* td = ::fdopendir(taskdirfd);
    if (td == nullptr) {
      ::close(taskdirfd);
      return;
    }
    ++s.processes;
    while (const dirent* te = ::readdir(td)) {
      const auto tid = numeric_name(te->d_name);
      if (!tid) continue;
      const int taskfd = ::openat(taskdirfd, te->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (taskfd < 0) {
        ++s.vanished;
        continue;
      }
      TaskInfo t;
      ParseError e;
      const ReadResult r = read_task_at(taskfd, tgid, *tid, t, &e);
      if (r == ReadResult::Ok && opts.read_cgroup) {
        char cg[8192];
        const ssize_t cn = read_at(taskfd, "cgroup", cg, sizeof cg);
        if (cn < 0) {
          ::close(taskfd);
          ++s.vanished;
          continue;
        }
        const auto lines = parse_proc_cgroup(std::string_view(cg, static_cast<size_t>(cn)), &e);
        if (!lines) {
          ::close(taskfd);
          note_malformed(e);
          continue;
        }
        t.cgroup = primary_cgroup_path(*lines);
        if (opts.cpuset_mounts != nullptr) {
          auto it = cpuset_cache.find(t.cgroup);
          if (it == cpuset_cache.end())
            it = cpuset_cache.emplace(t.cgroup, effective_cpuset(*opts.cpuset_mounts, *lines, &e)).first;
          t.cpuset = it->second;
        }
      }
      ::close(taskfd);
      if (r == ReadResult::Gone) {
        ++s.vanished;
      } else if (r == ReadResult::Malformed) {
        note_malformed(e);
      } else {
        ++s.tasks;
        out.push_back(std::move(t));
      }
    }
    ::closedir(td);
  };

  if (opts.only_tgid) {
    const auto p = opts.proc_root / std::to_string(*opts.only_tgid);
    const int procfd = ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procfd >= 0) {
      walk_process(procfd, *opts.only_tgid);
      ::close(procfd);
    }
    return out;
  }
  DIR* d = ::opendir(opts.proc_root.c_str());
  if (d == nullptr) {
    set_error(&s.first_error, opts.proc_root.string(), std::string("cannot be opened: ") + std::strerror(errno));
    ++s.malformed;
    return out;
  }
  const int rootfd = ::dirfd(d);
  while (const dirent* pe = ::readdir(d)) {
    const auto tgid = numeric_name(pe->d_name);
    if (!tgid) continue;
    const int procfd = ::openat(rootfd, pe->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procfd < 0) continue;  // the process exited
    walk_process(procfd, *tgid);
    ::close(procfd);
  }
  ::closedir(d);
  return out;
}

}  // namespace c2c::host
