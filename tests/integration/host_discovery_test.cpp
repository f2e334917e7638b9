// The three task discovery methods (procfs walk, BPF task iterator, BPF event stream) on real,
// named threads: same (tid, comm) set as `ps -eT -o tid=,comm=`, same start_ticks everywhere,
// renames seen by all three, and a reused TID reported with a different start_ticks.
#include <gtest/gtest.h>

#include <linux/sched.h>
#include <pthread.h>
#include <bpf/bpf.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "claim2core_abi.hpp"
#include "host/events_ringbuf.hpp"
#include "host/process_title.hpp"
#include "host/procfs_walker.hpp"
#include "host/task_cgroup.hpp"
#include "host/task_events.hpp"
#include "host/task_iter.hpp"
#include "host/cgroup_resolver.hpp"
#include "host/task_snapshot.hpp"

using namespace c2c::host;
using namespace std::chrono_literals;

namespace {

constexpr long kBpfFsMagic = 0xcafe4a11;

// BPF needs root; bpffs is mounted when missing (CI starts on a fresh boot).
std::string bpf_unavailable() {
  if (::geteuid() != 0) return "needs root (CAP_BPF, CAP_PERFMON) to load BPF programs";
  struct statfs st{};
  if (::statfs("/sys/fs/bpf", &st) != 0 || static_cast<long>(st.f_type) != kBpfFsMagic) {
    if (::mount("bpf", "/sys/fs/bpf", "bpf", 0, nullptr) != 0)
      return std::string("bpffs is not mounted and cannot be: ") + std::strerror(errno);
  }
  return {};
}

uint32_t self_tgid() { return static_cast<uint32_t>(::getpid()); }

// (tid -> comm) of this process as `ps -eT -o pid=,tid=,comm=` reports it.
std::map<uint32_t, std::string> ps_threads(uint32_t tgid) {
  std::map<uint32_t, std::string> out;
  FILE* p = ::popen("ps -eT -o pid=,tid=,comm=", "r");
  if (p == nullptr) return out;
  char line[512];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    unsigned pid = 0, tid = 0;
    int consumed = 0;
    if (std::sscanf(line, "%u %u %n", &pid, &tid, &consumed) < 2 || pid != tgid) continue;
    std::string comm(line + consumed);
    while (!comm.empty() && (comm.back() == '\n' || comm.back() == ' ')) comm.pop_back();
    out[tid] = comm;
  }
  ::pclose(p);
  return out;
}

// Every (tgid, tid) `ps -eT` lists.
std::set<std::pair<uint32_t, uint32_t>> ps_all_threads() {
  std::set<std::pair<uint32_t, uint32_t>> out;
  FILE* p = ::popen("ps -eT -o pid=,tid=", "r");
  if (p == nullptr) return out;
  unsigned pid = 0, tid = 0;
  while (std::fscanf(p, "%u %u", &pid, &tid) == 2) out.emplace(pid, tid);
  ::pclose(p);
  return out;
}

std::set<std::pair<uint32_t, uint32_t>> threads_of(const std::vector<TaskInfo>& tasks) {
  std::set<std::pair<uint32_t, uint32_t>> out;
  for (const auto& t : tasks) out.emplace(t.tgid, t.tid);
  return out;
}

std::map<uint32_t, std::string> by_tid(const std::vector<TaskInfo>& tasks, uint32_t tgid) {
  std::map<uint32_t, std::string> out;
  for (const auto& t : tasks)
    if (t.tgid == tgid) out[t.tid] = t.comm;
  return out;
}

std::map<uint32_t, uint64_t> starts(const std::vector<TaskInfo>& tasks, uint32_t tgid) {
  std::map<uint32_t, uint64_t> out;
  for (const auto& t : tasks)
    if (t.tgid == tgid) out[t.tid] = t.start_ticks;
  return out;
}

// Threads that name themselves and park until released.
class NamedThreads {
 public:
  explicit NamedThreads(const std::vector<std::string>& names) {
    for (const auto& n : names) {
      threads_.emplace_back([this, n] {
        if (!n.empty()) ::pthread_setname_np(::pthread_self(), n.c_str());
        std::unique_lock lk(m_);
        tids_.push_back(static_cast<uint32_t>(::gettid()));
        cv_.notify_all();
        cv_.wait(lk, [this] { return release_; });
      });
    }
    std::unique_lock lk(m_);
    cv_.wait(lk, [&] { return tids_.size() == names.size(); });
  }
  ~NamedThreads() {
    {
      std::lock_guard lk(m_);
      release_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  std::thread& thread(size_t i) { return threads_[i]; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool release_ = false;
  std::vector<uint32_t> tids_;
  std::vector<std::thread> threads_;
};

// Follows the event stream for one process: tid -> (start_ticks, comm) of live threads.
struct EventView {
  uint32_t tgid;
  std::map<uint32_t, TaskInfo> live;
  std::vector<TaskEvent> all;  // every event of the process, in order
  void operator()(const TaskEvent& e) {
    if (e.task.tgid != tgid) return;
    all.push_back(e);
    switch (e.kind) {
      case TaskEventKind::New:
      case TaskEventKind::Exec:
        live[e.task.tid] = e.task;
        break;
      case TaskEventKind::Rename:
        live[e.task.tid].comm = e.task.comm;
        live[e.task.tid].start_ticks = e.task.start_ticks;
        break;
      case TaskEventKind::Exit:
        live.erase(e.task.tid);
        break;
      case TaskEventKind::Snapshot:
        break;
    }
  }
};

// Polls until `done` holds or the deadline passes.
bool poll_until(TaskEventStream& s, const TaskEventStream::Handler& h, const std::function<bool()>& done,
                std::chrono::milliseconds deadline = 3s) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    if (s.poll(50, h) < 0) return false;
  }
  return true;
}

class HostDiscovery : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = bpf_unavailable();
    if (!why.empty()) GTEST_SKIP() << why;
    std::string err;
    events_ = TaskEventStream::open(&err);
    if (!events_) GTEST_SKIP() << "task event stream unavailable: " << err;
    iter_ = BpfTaskIterator::open(&err);
    ASSERT_TRUE(iter_) << err;
  }
  std::unique_ptr<TaskEventStream> events_;
  std::unique_ptr<BpfTaskIterator> iter_;
};

TEST_F(HostDiscovery, ThreeMethodsAgreeWithPs) {
  const uint32_t tgid = self_tgid();
  EventView view{tgid, {}, {}};
  NamedThreads threads({"EngineCore_DP0", "EngineCore_DP1", "Tokenizer", "nccl-proxy", ""});
  // Every new thread arrives as New (with the parent's comm) and, when named, as Rename.
  ASSERT_TRUE(poll_until(*events_, std::ref(view), [&] {
    int renamed = 0;
    for (const auto& e : view.all) renamed += e.kind == TaskEventKind::Rename ? 1 : 0;
    return view.live.size() >= 5 && renamed >= 4;
  })) << "events seen: " << view.all.size();

  ProcfsWalkOptions o;
  o.only_tgid = tgid;
  const auto proc = walk_procfs(o);
  std::string err;
  const auto iter_one = iter_->snapshot(&err, tgid);
  ASSERT_TRUE(iter_one) << err;
  const auto iter_all = iter_->snapshot(&err);
  ASSERT_TRUE(iter_all) << err;
  const auto ps = ps_threads(tgid);

  const auto proc_set = by_tid(proc, tgid);
  ASSERT_EQ(proc_set.size(), 6u);  // main + 5
  EXPECT_EQ(proc_set, ps);
  EXPECT_EQ(by_tid(*iter_one, tgid), ps);
  EXPECT_EQ(by_tid(*iter_all, tgid), ps);
  int engine = 0;
  for (const auto& [tid, comm] : ps) engine += comm.rfind("EngineCore_DP", 0) == 0 ? 1 : 0;
  EXPECT_EQ(engine, 2);

  // The event stream saw every thread but the main one (it predates the stream).
  std::map<uint32_t, std::string> ev_set;
  for (const auto& [tid, t] : view.live) ev_set[tid] = t.comm;
  auto expected = ps;
  expected.erase(tgid);
  EXPECT_EQ(ev_set, expected);

  // start_ticks agree exactly between BPF and /proc.
  const auto proc_start = starts(proc, tgid);
  EXPECT_EQ(starts(*iter_one, tgid), proc_start);
  for (const auto& [tid, t] : view.live) EXPECT_EQ(t.start_ticks, proc_start.at(tid)) << "tid " << tid;
  for (const auto& e : view.all) {
    if (e.kind == TaskEventKind::New) {
      // At fork the child still carries the parent's comm.
      EXPECT_EQ(e.task.comm, proc_set.at(tgid)) << "tid " << e.task.tid;
    }
  }
  EXPECT_EQ(events_->malformed(), 0u);
}

TEST_F(HostDiscovery, RenameIsSeenByEveryMethod) {
  const uint32_t tgid = self_tgid();
  EventView view{tgid, {}, {}};
  NamedThreads threads({"EngineCore_DP1"});
  ASSERT_TRUE(poll_until(*events_, std::ref(view), [&] {
    return !view.live.empty() && view.live.begin()->second.comm == "EngineCore_DP1";
  }));
  const uint32_t tid = view.live.begin()->first;
  // Renaming another thread writes /proc/<tid>/comm (comm_write -> set_task_comm).
  ASSERT_EQ(::pthread_setname_np(threads.thread(0).native_handle(), "EngineCore_DP7"), 0);
  ASSERT_TRUE(poll_until(*events_, std::ref(view), [&] {
    for (const auto& e : view.all)
      if (e.kind == TaskEventKind::Rename && e.task.tid == tid && e.task.comm == "EngineCore_DP7") return true;
    return false;
  })) << "no rename event for tid " << tid;

  ProcfsWalkOptions o;
  o.only_tgid = tgid;
  std::string err;
  const auto iter = iter_->snapshot(&err, tgid);
  ASSERT_TRUE(iter) << err;
  EXPECT_EQ(by_tid(walk_procfs(o), tgid).at(tid), "EngineCore_DP7");
  EXPECT_EQ(by_tid(*iter, tgid).at(tid), "EngineCore_DP7");
  EXPECT_EQ(ps_threads(tgid).at(tid), "EngineCore_DP7");
  EXPECT_EQ(view.live.at(tid).comm, "EngineCore_DP7");
  EXPECT_EQ(view.live.at(tid).start_ticks, starts(*iter, tgid).at(tid));
}

TEST_F(HostDiscovery, PrctlRenameOfSelfArrivesAsRename) {
  const uint32_t tgid = self_tgid();
  EventView view{tgid, {}, {}};
  uint32_t tid = 0;
  std::thread t([&] {
    tid = static_cast<uint32_t>(::gettid());
    ::prctl(PR_SET_NAME, "EngineCore_DP3", 0, 0, 0);
  });
  t.join();
  ASSERT_TRUE(poll_until(*events_, std::ref(view), [&] {
    for (const auto& e : view.all)
      if (e.kind == TaskEventKind::Exit && e.task.tid == tid) return true;
    return false;
  }));
  std::vector<TaskEventKind> kinds;
  for (const auto& e : view.all)
    if (e.task.tid == tid) kinds.push_back(e.kind);
  ASSERT_EQ(kinds.size(), 3u);
  EXPECT_EQ(kinds[0], TaskEventKind::New);
  EXPECT_EQ(kinds[1], TaskEventKind::Rename);
  EXPECT_EQ(kinds[2], TaskEventKind::Exit);
  for (const auto& e : view.all) {
    if (e.task.tid == tid && e.kind != TaskEventKind::New) {
      EXPECT_EQ(e.task.comm, "EngineCore_DP3");
    }
    // The rename carries the hash of this process's title, as the daemon reads it from /proc.
    if (e.task.tid == tid && e.kind == TaskEventKind::Rename) {
      auto title = read_process_title("/proc", tgid);
      ASSERT_TRUE(title.has_value());
      EXPECT_EQ(e.title_hash, title_hash(*title)) << "title '" << *title << "'";
    }
  }
  // The leader's rename carries none: the daemon reads the title after it whatever the hash.
  char comm[16] = {};
  ::prctl(PR_GET_NAME, comm, 0, 0, 0);
  ::prctl(PR_SET_NAME, "c2c-leader", 0, 0, 0);
  ::prctl(PR_SET_NAME, comm, 0, 0, 0);
  std::optional<uint32_t> leader_hash;
  EXPECT_TRUE(poll_until(*events_, std::ref(view), [&] {
    for (const auto& e : view.all)
      if (e.kind == TaskEventKind::Rename && e.task.tid == tgid && e.task.comm == "c2c-leader") leader_hash = e.title_hash;
    return leader_hash.has_value();
  }));
  EXPECT_EQ(leader_hash, std::optional<uint32_t>(0u));
}

// clone3 with set_tid: a child process with exactly the tid `want` (0: any).
pid_t spawn_blocked_child(const int pipe_fds[2], pid_t want) {
  struct clone_args args{};
  args.exit_signal = SIGCHLD;
  pid_t tid_arr[1] = {want};
  if (want != 0) {
    args.set_tid = reinterpret_cast<uintptr_t>(tid_arr);
    args.set_tid_size = 1;
  }
  const long r = ::syscall(SYS_clone3, &args, sizeof args);
  if (r == 0) {
    // Child of a multithreaded parent: raw syscalls only. Block until the parent closes the pipe.
    // Its copy of the write end must go, or closing the parent's would not end the read.
    ::close(pipe_fds[1]);
    char c;
    while (::read(pipe_fds[0], &c, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  return static_cast<pid_t>(r);
}

TEST_F(HostDiscovery, ReusedTidGetsDifferentStartTicks) {
  int p1[2], p2[2];
  ASSERT_EQ(::pipe(p1), 0);
  const pid_t a = spawn_blocked_child(p1, 0);
  ASSERT_GT(a, 0) << std::strerror(errno);
  const uint32_t tid = static_cast<uint32_t>(a);
  std::string err;
  const auto first = read_proc_task("/proc", tid, tid);
  const auto first_iter = iter_->snapshot(&err, tid);
  ::close(p1[1]);
  ::waitpid(a, nullptr, 0);
  ::close(p1[0]);
  ASSERT_TRUE(first);
  ASSERT_TRUE(first_iter) << err;
  ASSERT_EQ(first_iter->size(), 1u);
  EXPECT_EQ(first_iter->front().start_ticks, first->start_ticks);

  std::this_thread::sleep_for(30ms);  // start_ticks has a 10 ms resolution
  ASSERT_EQ(::pipe(p2), 0);
  const pid_t b = spawn_blocked_child(p2, a);
  if (b < 0) {
    const int e = errno;
    ::close(p2[0]);
    ::close(p2[1]);
    GTEST_SKIP() << "clone3(set_tid=" << a << ") failed: " << std::strerror(e);
  }
  ASSERT_EQ(b, a) << "clone3 ignored set_tid";
  const auto second = read_proc_task("/proc", tid, tid);
  const auto second_iter = iter_->snapshot(&err, tid);
  EventView view{tid, {}, {}};
  const bool got = poll_until(*events_, std::ref(view), [&] {
    int news = 0;
    for (const auto& e : view.all) news += e.kind == TaskEventKind::New ? 1 : 0;
    return news >= 2;
  });
  ::close(p2[1]);
  ::waitpid(b, nullptr, 0);
  ::close(p2[0]);

  ASSERT_TRUE(second);
  ASSERT_TRUE(second_iter) << err;
  ASSERT_EQ(second_iter->size(), 1u);
  EXPECT_NE(second->start_ticks, first->start_ticks) << "same tid, same start: identity would be ambiguous";
  EXPECT_GT(second->start_ticks, first->start_ticks);
  EXPECT_EQ(second_iter->front().start_ticks, second->start_ticks);
  ASSERT_TRUE(got) << "events seen for tid " << tid << ": " << view.all.size();
  // New(tid, first start), Exit(tid, first start), New(tid, second start).
  std::vector<std::pair<TaskEventKind, uint64_t>> seq;
  for (const auto& e : view.all) seq.emplace_back(e.kind, e.task.start_ticks);
  ASSERT_GE(seq.size(), 3u);
  EXPECT_EQ(seq[0], std::make_pair(TaskEventKind::New, first->start_ticks));
  EXPECT_EQ(seq[1], std::make_pair(TaskEventKind::Exit, first->start_ticks));
  EXPECT_EQ(seq[2], std::make_pair(TaskEventKind::New, second->start_ticks));
}

TEST_F(HostDiscovery, ExecOfNonLeaderReportsOldTid) {
  // A child process whose second thread execs: the exec event carries the leader's tid and the
  // exec'ing thread's former tid.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::thread t([] {
      const char* argv[] = {"/bin/true", nullptr};
      ::execv(argv[0], const_cast<char* const*>(argv));
      ::_exit(127);
    });
    t.join();
    ::_exit(126);
  }
  const uint32_t tgid = static_cast<uint32_t>(child);
  EventView view{tgid, {}, {}};
  ASSERT_TRUE(poll_until(*events_, std::ref(view), [&] {
    for (const auto& e : view.all)
      if (e.kind == TaskEventKind::Exec) return true;
    return false;
  }));
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  for (const auto& e : view.all) {
    if (e.kind != TaskEventKind::Exec) continue;
    EXPECT_EQ(e.task.tid, tgid);
    EXPECT_NE(e.old_tid, tgid);
    EXPECT_NE(e.old_tid, 0u);
    EXPECT_EQ(e.task.comm, "true");
  }
}

TEST_F(HostDiscovery, IteratorRecordsResolveToCgroupPathAndCpuset) {
  ParseError perr;
  const auto mounts = CgroupMounts::discover(&perr);
  ASSERT_TRUE(mounts) << perr.to_string();
  if (!mounts->unified()) GTEST_SKIP() << "no cgroup2 mount: BPF cgroup ids cannot be resolved";
  const auto own = parse_proc_cgroup(*read_file("/proc/self/cgroup"), &perr);
  ASSERT_TRUE(own) << perr.to_string();
  std::string v2_path;
  for (const auto& l : *own)
    if (l.unified()) v2_path = l.path;
  ASSERT_FALSE(v2_path.empty());

  NamedThreads threads({"EngineCore_DP0"});
  std::string err;
  auto snap = iter_->snapshot(&err, self_tgid());
  ASSERT_TRUE(snap) << err;
  ASSERT_EQ(snap->size(), 2u);
  const auto idx = CgroupIdIndex::build(*mounts->unified());
  const auto expected_cpuset = effective_cpuset(*mounts, *own, &perr);
  for (auto& t : *snap) {
    EXPECT_NE(t.cgroup_id, 0u);
    EXPECT_EQ(idx.path(t.cgroup_id), v2_path) << "tid " << t.tid;
    ASSERT_TRUE(fill_cgroup_from_proc(t, &*mounts, &perr)) << perr.to_string();
    EXPECT_EQ(t.cgroup, primary_cgroup_path(*own));
    EXPECT_EQ(t.cpuset, expected_cpuset);
  }
}

// Issue 13: loaded for the resolver's hierarchy (the v1 cpuset one on a hybrid host like this
// project's CI host, else v2), the iterator's and the event stream's records carry the id that
// CgroupResolver maps to exactly what /proc gives: the primary cgroup path and its cpuset.
TEST_F(HostDiscovery, RecordsCarryTheIdOfTheCgroupTheResolverMaps) {
  ParseError perr;
  const auto mounts = CgroupMounts::discover(&perr);
  ASSERT_TRUE(mounts) << perr.to_string();
  CgroupResolver resolver(&*mounts);
  if (!resolver.by_id()) GTEST_SKIP() << "a v1 cpu hierarchy without cpuset: ids name no primary path";
  std::string err;
  auto iter = BpfTaskIterator::open(&err, {}, resolver.id_of());
  ASSERT_TRUE(iter) << err;
  auto stream = TaskEventStream::open(&err, {}, {}, 0, resolver.id_of());
  ASSERT_TRUE(stream) << err;
  NamedThreads threads({"EngineCore_DP7"});
  EventView view{self_tgid(), {}, {}};
  ASSERT_TRUE(poll_until(*stream, std::ref(view), [&] {
    for (const auto& e : view.all)
      if (e.kind == TaskEventKind::Rename && e.task.comm == "EngineCore_DP7") return true;
    return false;
  }));
  auto snap = iter->snapshot(&err, self_tgid());
  ASSERT_TRUE(snap) << err;
  ASSERT_EQ(snap->size(), 2u);
  std::vector<TaskInfo> records = *snap;
  for (const auto& e : view.all)
    if (e.kind == TaskEventKind::Rename && e.task.comm == "EngineCore_DP7") records.push_back(e.task);
  ASSERT_EQ(records.size(), 3u);
  resolver.begin_pass();
  for (auto t : records) {
    TaskInfo from_proc = t;
    ASSERT_TRUE(fill_cgroup_from_proc(from_proc, &*mounts, &perr)) << perr.to_string();
    ASSERT_TRUE(resolver.fill(t)) << "tid " << t.tid << " cgroup_id " << t.cgroup_id;
    EXPECT_EQ(t.cgroup, from_proc.cgroup) << "tid " << t.tid;
    EXPECT_EQ(t.cpuset, from_proc.cpuset) << "tid " << t.tid;
  }
  EXPECT_EQ(resolver.cpuset_reads(), 1u);
}

TEST_F(HostDiscovery, SnapshotterUsesTheIteratorAsRoot) {
  TaskSnapshotter s(true);
  ASSERT_EQ(s.source(), SnapshotSource::BpfIterator) << s.fallback_reason();
  NamedThreads threads({"EngineCore_DP0", "EngineCore_DP1"});
  const auto own = s.snapshot(self_tgid());
  EXPECT_EQ(by_tid(own, self_tgid()), ps_threads(self_tgid()));
}

TEST_F(HostDiscovery, IteratorForAnExitedProcessIsEmpty) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  std::string err;
  const auto snap = iter_->snapshot(&err, static_cast<uint32_t>(child));
  ASSERT_TRUE(snap) << err;
  EXPECT_TRUE(snap->empty());
}

// The event programs can write into a pinned ring buffer (the map set's C2C_EVENTS_PIN); a pin
// of the wrong shape is refused. A private pin path is used so that a running daemon is untouched.
TEST_F(HostDiscovery, EventsIntoAPinnedRingBuffer) {
  const std::string pin = "/sys/fs/bpf/c2c-host-test-events-" + std::to_string(::getpid());
  const std::string bad_pin = pin + "-bad";
  const int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, C2C_EVENTS_MAP_NAME, 0, 0, C2C_EVENTS_RINGBUF_BYTES, nullptr);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const int bad = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "c2c_small", 0, 0, 4096, nullptr);
  ASSERT_GE(bad, 0) << std::strerror(errno);
  ASSERT_EQ(bpf_obj_pin(fd, pin.c_str()), 0) << std::strerror(errno);
  ASSERT_EQ(bpf_obj_pin(bad, bad_pin.c_str()), 0) << std::strerror(errno);
  ::close(fd);
  ::close(bad);

  std::string err;
  EXPECT_FALSE(TaskEventStream::open(&err, {}, bad_pin));
  EXPECT_NE(err.find("ring buffer"), std::string::npos) << err;
  EXPECT_FALSE(TaskEventStream::open(&err, {}, pin + "-missing"));
  EXPECT_NE(err.find("-missing"), std::string::npos) << err;

  auto stream = TaskEventStream::open(&err, {}, pin);
  ASSERT_TRUE(stream) << err;
  EventView view{self_tgid(), {}, {}};
  NamedThreads threads({"EngineCore_DP5"});
  const bool got = poll_until(*stream, std::ref(view), [&] {
    for (const auto& e : view.all)
      if (e.kind == TaskEventKind::Rename && e.task.comm == "EngineCore_DP5") return true;
    return false;
  });
  // The programs write into the pinned map itself, not into a private copy.
  const int reader = bpf_obj_get(pin.c_str());
  ::unlink(pin.c_str());
  ::unlink(bad_pin.c_str());
  ASSERT_GE(reader, 0);
  bpf_map_info info{};
  uint32_t len = sizeof info;
  ASSERT_EQ(bpf_map_get_info_by_fd(reader, &info, &len), 0);
  ::close(reader);
  EXPECT_EQ(info.type, BPF_MAP_TYPE_RINGBUF);
  EXPECT_EQ(stream->events_map_id(), info.id);
  EXPECT_NE(events_->events_map_id(), info.id);  // the fixture's stream has a private buffer
  EXPECT_NE(events_->events_map_id(), 0u);
  EXPECT_TRUE(got) << "no rename event through the pinned ring buffer";
}

// A ring buffer nobody reads fills up: the records that did not fit are counted (the daemon then
// rescans), and reading what is there does not change the count.
TEST_F(HostDiscovery, RecordsThatDidNotFitAreCounted) {
  std::string err;
  auto stream = TaskEventStream::open(&err, {}, {}, kMinEventsRingbufBytes);
  ASSERT_TRUE(stream) << err;
  EXPECT_EQ(stream->dropped(), 0u);
  // 1 MiB holds ~18,700 records of 56 bytes; 8,000 threads make 24,000 (new, rename, exit).
  for (int i = 0; i < 8000; ++i) std::thread([] { ::prctl(PR_SET_NAME, "c2c-overflow", 0, 0, 0); }).join();
  const uint64_t dropped = stream->dropped();
  EXPECT_GT(dropped, 1000u) << "the full ring buffer's losses";
  uint64_t read = 0;
  while (stream->poll(0, [&](const TaskEvent&) { ++read; }) > 0) {
  }
  EXPECT_GT(read, 10000u);
  EXPECT_GE(stream->dropped(), dropped) << "a count, never reset by reading";
}

// Issue 13: the daemon hands the stream the ring buffer fd PinnedMaps opened and verified (the pin
// is not opened again by path); a private ring buffer has the size asked for. Both refuse what
// cannot carry the records, naming why.
TEST_F(HostDiscovery, EventsIntoAMapFdAndAPrivateRingBufferOfTheWantedSize) {
  const int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, C2C_EVENTS_MAP_NAME, 0, 0, 2u << 20, nullptr);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  bpf_map_info info{};
  uint32_t len = sizeof info;
  ASSERT_EQ(bpf_map_get_info_by_fd(fd, &info, &len), 0);
  std::string err;
  auto stream = TaskEventStream::open_on_map(&err, fd);
  ASSERT_TRUE(stream) << err;
  EXPECT_EQ(stream->ringbuf_bytes(), 2u << 20);
  EXPECT_EQ(stream->events_map_id(), info.id);
  EventView view{self_tgid(), {}, {}};
  NamedThreads threads({"EngineCore_DP6"});
  EXPECT_TRUE(poll_until(*stream, std::ref(view), [&] {
    for (const auto& e : view.all)
      if (e.kind == TaskEventKind::Rename && e.task.comm == "EngineCore_DP6") return true;
    return false;
  })) << "no rename event through the map fd";

  const int hash = bpf_map_create(BPF_MAP_TYPE_HASH, "c2c_not_a_ring", 4, 4, 16, nullptr);
  ASSERT_GE(hash, 0) << std::strerror(errno);
  EXPECT_FALSE(TaskEventStream::open_on_map(&err, hash));
  EXPECT_NE(err.find("not a ring buffer"), std::string::npos) << err;
  ::close(hash);
  ::close(fd);

  auto priv = TaskEventStream::open(&err, {}, {}, 8u << 20);
  ASSERT_TRUE(priv) << err;
  EXPECT_EQ(priv->ringbuf_bytes(), 8u << 20);
  EXPECT_EQ(events_->ringbuf_bytes(), C2C_EVENTS_RINGBUF_BYTES);  // the fixture's: the default
  EXPECT_FALSE(TaskEventStream::open(&err, {}, {}, 3u << 20));
  EXPECT_NE(err.find("power of two"), std::string::npos) << err;
}

// Item 7 of issue 12: on this project's CI host the kernel hands the task iterator no thread of
// TGID 1 (a full pass, the pid filter and a pidfd alike), while ps and /proc list them. The
// threads compared are those in two ps listings taken around the pass (threads that start or end
// meanwhile may or may not be in it). The raw iterator may only miss whole processes (which the
// snapshotter then walks in /proc); the snapshotter must miss nothing.
TEST_F(HostDiscovery, EveryThreadPsListsIsInTheSnapshotThreadByThread) {
  TaskSnapshotter snapshotter(true);
  ASSERT_EQ(snapshotter.source(), SnapshotSource::BpfIterator) << snapshotter.fallback_reason();
  NamedThreads threads({"EngineCore_DP0", "EngineCore_DP1"});
  const auto before = ps_all_threads();
  std::string err;
  const auto raw = iter_->snapshot(&err);
  ASSERT_TRUE(raw) << err;
  const auto withheld = withheld_tgids(*raw, list_proc_tgids());
  const auto snap = snapshotter.snapshot();
  const auto after = ps_all_threads();
  ASSERT_EQ(snapshotter.source(), SnapshotSource::BpfIterator) << snapshotter.fallback_reason();
  std::set<std::pair<uint32_t, uint32_t>> stable;
  std::set_intersection(before.begin(), before.end(), after.begin(), after.end(), std::inserter(stable, stable.end()));
  ASSERT_GT(stable.size(), 10u);

  const auto in_raw = threads_of(*raw);
  const auto in_snap = threads_of(snap);
  const std::set<uint32_t> withheld_set(withheld.begin(), withheld.end());
  std::string withheld_text;
  for (uint32_t g : withheld) withheld_text += " " + std::to_string(g);
  RecordProperty("withheld_by_the_iterator", withheld_text);
  size_t compared = 0;
  for (const auto& th : stable) {
    ++compared;
    EXPECT_TRUE(in_snap.count(th)) << "tgid " << th.first << " tid " << th.second << ": in ps, not in the snapshot";
    EXPECT_TRUE(in_raw.count(th) || withheld_set.count(th.first))
        << "tgid " << th.first << " tid " << th.second
        << ": the iterator returned other threads of this process but not this one";
  }
  EXPECT_EQ(compared, stable.size());
  // Our own threads come from the iterator itself (nothing of ours is withheld).
  EXPECT_FALSE(withheld_set.count(self_tgid()));
  EXPECT_EQ(by_tid(*raw, self_tgid()).size(), 3u);
}

TEST_F(HostDiscovery, PidFilteredSnapshotOfInitHasEveryThreadPsLists) {
  TaskSnapshotter snapshotter(true);
  ASSERT_EQ(snapshotter.source(), SnapshotSource::BpfIterator) << snapshotter.fallback_reason();
  const auto before = ps_threads(1);
  const auto snap = snapshotter.snapshot(1);
  const auto after = ps_threads(1);
  ASSERT_FALSE(before.empty());
  const auto got = by_tid(snap, 1);
  for (const auto& [tid, comm] : before)
    if (after.count(tid)) {
      EXPECT_TRUE(got.count(tid)) << "TGID 1 thread " << tid << " (" << comm << ") missing";
    }
}

// Item 5 of issue 12: records a killed consumer left in the pinned ring buffer predate the next
// consumer's snapshot; replayed, a fork of a thread that died meanwhile resurrected it.
TEST_F(HostDiscovery, RecordsLeftInAPinnedRingBufferAreNotReplayed) {
  const std::string pin = "/sys/fs/bpf/c2c-host-test-stale-" + std::to_string(::getpid());
  const int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, C2C_EVENTS_MAP_NAME, 0, 0, C2C_EVENTS_RINGBUF_BYTES, nullptr);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(bpf_obj_pin(fd, pin.c_str()), 0) << std::strerror(errno);
  ::close(fd);
  struct Unpin {
    std::string path;
    ~Unpin() { ::unlink(path.c_str()); }
  } unpin{pin};

  std::string err;
  auto first = TaskEventStream::open(&err, {}, pin);
  ASSERT_TRUE(first) << err;
  uint32_t tid = 0;
  std::thread t([&] {
    tid = static_cast<uint32_t>(::gettid());
    ::prctl(PR_SET_NAME, "c2c-stale-ev", 0, 0, 0);
  });
  t.join();
  first.reset();  // never polled: its fork, rename and exit records stay in the pinned buffer

  auto second = TaskEventStream::open(&err, {}, pin);
  ASSERT_TRUE(second) << err;
  EXPECT_GE(second->stale_discarded(), 3u);
  std::vector<TaskEvent> seen;
  const auto end = std::chrono::steady_clock::now() + 300ms;
  while (std::chrono::steady_clock::now() < end)
    ASSERT_GE(second->poll(50, [&](const TaskEvent& e) {
      if (e.task.tid == tid) seen.push_back(e);
    }), 0);
  EXPECT_TRUE(seen.empty()) << seen.size() << " stale records of tid " << tid << " replayed, first "
                            << to_string(seen.front().kind);
}

}  // namespace
