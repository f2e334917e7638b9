// Process titles (issue #15): argv[0] of a fake /proc/<tgid>/cmdline as setproctitle leaves it, the
// bound on the read, the executable when argv[0] is empty, and the cache: read once per process,
// re-read on rename (then every thread of the process is returned), forgotten on exec and exit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/model.hpp"
#include "host/process_title.hpp"
#include "host_fake_proc.hpp"

using namespace c2c::host;
namespace fs = std::filesystem;

namespace {

using c2c::host::testing::stat_line;

class FakeTitles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("c2c-host-title-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    // setproctitle("VLLM::EngineCore_DP0"): the title, then NUL padding over the old argv.
    cmdline(500, std::string("VLLM::EngineCore_DP0") + std::string(40, '\0'));
    thread(500, 500, "VLLM::EngineCor", 900);
    thread(500, 501, "python3", 901);
    thread(500, 502, "ZMQbg/IO/0", 902);
  }
  void TearDown() override { fs::remove_all(root_); }
  void cmdline(uint32_t tgid, const std::string& bytes) {
    fs::create_directories(root_ / std::to_string(tgid));
    std::ofstream(root_ / std::to_string(tgid) / "cmdline", std::ios::binary) << bytes;
  }
  void thread(uint32_t tgid, uint32_t tid, const std::string& comm, uint64_t start) {
    auto dir = root_ / std::to_string(tgid) / "task" / std::to_string(tid);
    fs::create_directories(dir);
    std::ofstream(dir / "stat") << stat_line(tid, comm, start);
    std::ofstream(dir / "comm") << comm << "\n";
  }
  static TaskEvent event(TaskEventKind kind, uint32_t tid, uint32_t tgid) {
    TaskEvent e;
    e.kind = kind;
    e.task.tid = tid;
    e.task.tgid = tgid;
    return e;
  }
  // A rename record as the task-event program writes it: the title's hash as argv[0] read then.
  static TaskEvent rename_seeing(uint32_t tid, uint32_t tgid, const std::string& title) {
    TaskEvent e = event(TaskEventKind::Rename, tid, tgid);
    e.title_hash = title_hash(title);
    return e;
  }
  fs::path root_;
};

}  // namespace

TEST_F(FakeTitles, Argv0AsSetproctitleLeavesIt) {
  EXPECT_EQ(read_process_title(root_, 500), "VLLM::EngineCore_DP0");
  cmdline(600, std::string("/usr/bin/python3\0-m\0vllm.entrypoints\0", 36));
  EXPECT_EQ(read_process_title(root_, 600), "/usr/bin/python3") << "argv[0] only, not the whole command line";
}

TEST_F(FakeTitles, TheReadIsBounded) {
  cmdline(600, std::string(5000, 'x'));
  auto t = read_process_title(root_, 600);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->size(), c2c::kMaxTitleBytes) << "cut to the core's bound on Task::title";
}

TEST_F(FakeTitles, EmptyArgvFallsBackToTheExecutableAndAKernelThreadHasNone) {
  cmdline(700, "");
  fs::create_symlink("/usr/bin/true", root_ / "700" / "exe");
  EXPECT_EQ(read_process_title(root_, 700), "/usr/bin/true");
  cmdline(2, "");  // kthreadd: no command line, no executable
  EXPECT_EQ(read_process_title(root_, 2), "");
  EXPECT_EQ(read_process_title(root_, 4242), std::nullopt) << "a process that is gone";
}

TEST_F(FakeTitles, ReadOncePerProcess) {
  ProcessTitles titles(root_);
  EXPECT_EQ(titles.get(500, 900), "VLLM::EngineCore_DP0");
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP0");
  EXPECT_EQ(titles.get(500, 900), "VLLM::EngineCore_DP0");
  EXPECT_EQ(titles.reads(), 1u) << "three threads of one process, one cmdline read";
  // A new thread of the process is served from the cache; an argv rewrite alone is not seen...
  cmdline(500, "VLLM::EngineCore_DP1");
  EXPECT_TRUE(titles.after_event(event(TaskEventKind::New, 503, 500), 0).empty());
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP0");
  // ...until the next rescan, which clears the cache and reads every process once more.
  titles.clear();
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP1");
  EXPECT_EQ(titles.reads(), 2u);
}

TEST_F(FakeTitles, AReusedTgidUnderANewLeaderIsReadAgain) {
  ProcessTitles titles(root_);
  EXPECT_EQ(titles.get(500, 900), "VLLM::EngineCore_DP0");
  cmdline(500, "bash");
  EXPECT_EQ(titles.get(500, 1234), "bash") << "the leader's start differs: another process";
}

TEST_F(FakeTitles, ARenameThatChangedTheTitleReturnsEveryThreadOfTheProcess) {
  ProcessTitles titles(root_);
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP0");
  // A rename that left the title as it was (pthread_setname_np of a helper): nothing to resend.
  EXPECT_TRUE(titles.after_event(event(TaskEventKind::Rename, 502, 500), 0).empty());
  // setproctitle: argv rewritten and the calling thread renamed (past the rename read interval).
  cmdline(500, std::string("VLLM::EngineCore_DP3\0", 21));
  auto threads = titles.after_event(event(TaskEventKind::Rename, 500, 500), ProcessTitles::kRenameReadInterval);
  std::vector<uint32_t> tids;
  for (const auto& t : threads) tids.push_back(t.tid);
  std::sort(tids.begin(), tids.end());
  EXPECT_EQ(tids, (std::vector<uint32_t>{500, 501, 502}));
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP3");
}

TEST_F(FakeTitles, ExecAndTheLeadersExitForgetTheTitle) {
  ProcessTitles titles(root_);
  titles.get(500);
  titles.after_event(event(TaskEventKind::Exit, 501, 500), 0);
  EXPECT_EQ(titles.size(), 1u) << "a thread's exit keeps the process's title";
  titles.after_event(event(TaskEventKind::Exit, 500, 500), 0);
  EXPECT_EQ(titles.size(), 0u) << "the leader's exit drops it";
  titles.get(500);
  cmdline(500, "/usr/bin/stress-ng");
  titles.after_event(event(TaskEventKind::Exec, 500, 500), 0);
  EXPECT_EQ(titles.get(500), "/usr/bin/stress-ng") << "exec: a new argv";
  titles.after_event(event(TaskEventKind::New, 500, 500), 0);
  EXPECT_EQ(titles.size(), 0u) << "a new process under a tgid drops what the old one had";
}

TEST_F(FakeTitles, RenamesWithinTheIntervalOweOneReadThatFallsDueAtItsEnd) {
  ProcessTitles titles(root_);
  const uint64_t t0 = 5'000'000'000;
  const uint64_t step = ProcessTitles::kRenameReadInterval;
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP0");
  const uint64_t reads = titles.reads();
  // A thread pool naming its workers one after another: the first rename reads, the rest owe one.
  EXPECT_TRUE(titles.after_event(event(TaskEventKind::Rename, 501, 500), t0).empty());
  EXPECT_EQ(titles.reads(), reads + 1) << "the first rename after a quiet interval reads at once";
  EXPECT_FALSE(titles.next_owed().has_value());
  cmdline(500, std::string("VLLM::EngineCore_DP3\0", 21));
  EXPECT_TRUE(titles.after_event(event(TaskEventKind::Rename, 502, 500), t0 + step / 2).empty());
  EXPECT_TRUE(titles.after_event(event(TaskEventKind::Rename, 500, 500), t0 + step / 2 + 1).empty());
  EXPECT_EQ(titles.reads(), reads + 1) << "renames within the interval do not read";
  ASSERT_TRUE(titles.next_owed().has_value());
  EXPECT_EQ(*titles.next_owed(), t0 + step) << "due one interval after the last read";
  EXPECT_TRUE(titles.refresh_owed(t0 + step - 1).empty()) << "not due yet";
  EXPECT_EQ(titles.reads(), reads + 1);
  auto threads = titles.refresh_owed(t0 + step);
  EXPECT_EQ(titles.reads(), reads + 2) << "one read for all the owed renames";
  EXPECT_EQ(threads.size(), 3u) << "the title changed: every thread of the process";
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP3");
  EXPECT_FALSE(titles.next_owed().has_value()) << "paid";
  // The next rename is within the interval of that read: owed again, and a rescan (clear) or the
  // process's exit drops what is owed.
  EXPECT_TRUE(titles.after_event(event(TaskEventKind::Rename, 501, 500), t0 + step + 1).empty());
  EXPECT_TRUE(titles.next_owed().has_value());
  titles.after_event(event(TaskEventKind::Exit, 500, 500), t0 + step + 2);
  EXPECT_FALSE(titles.next_owed().has_value()) << "the leader's exit forgets the owed read with the title";
}

// A rename record that carries the title's hash (the task-event program reads the renaming
// process's argv[0]) is compared with the cached title's: the same needs no read of the command
// line, another is read (at once after a quiet interval), and an unknown hash (0) reads as before.
TEST_F(FakeTitles, ARenameCarryingTheCachedTitlesHashReadsNothing) {
  ProcessTitles titles(root_);
  const uint64_t step = ProcessTitles::kRenameReadInterval;
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP0");
  const uint64_t reads = titles.reads();
  const TaskEvent same = rename_seeing(501, 500, "VLLM::EngineCore_DP0");
  for (uint64_t i = 0; i < 5; ++i) EXPECT_TRUE(titles.after_event(same, i * step).empty());
  EXPECT_EQ(titles.reads(), reads) << "a thread pool naming its workers: no read";
  EXPECT_FALSE(titles.next_owed().has_value()) << "and none owed";

  cmdline(500, std::string("VLLM::EngineCore_DP3\0", 21));
  EXPECT_EQ(titles.after_event(rename_seeing(501, 500, "VLLM::EngineCore_DP3"), 10 * step).size(), 3u)
      << "another title: read, every thread resent";
  EXPECT_EQ(titles.reads(), reads + 1);
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP3");

  TaskEvent unknown = event(TaskEventKind::Rename, 502, 500);  // title_hash 0
  EXPECT_TRUE(titles.after_event(unknown, 20 * step).empty());
  EXPECT_EQ(titles.reads(), reads + 2) << "no hash: read as before";
}

// The leader's renames read even when the hash is the cached title's: a program may rename its
// main thread first and rewrite argv after it (systemd's rename_process), so the hash taken at the
// rename is the old title's and only the read finds the new one.
TEST_F(FakeTitles, TheLeadersRenameReadsWhateverItsHash) {
  ProcessTitles titles(root_);
  const uint64_t step = ProcessTitles::kRenameReadInterval;
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP0");
  const uint64_t reads = titles.reads();
  cmdline(500, std::string("VLLM::EngineCore_DP4\0", 21));
  // The hash was taken at the rename, before argv was rewritten.
  EXPECT_EQ(titles.after_event(rename_seeing(500, 500, "VLLM::EngineCore_DP0"), 10 * step).size(), 3u)
      << "read: the title changed";
  EXPECT_EQ(titles.reads(), reads + 1);
  EXPECT_EQ(titles.get(500), "VLLM::EngineCore_DP4");
}

TEST(TitleHash, IsFnv1aOfTheTitleAndNeverZero) {
  EXPECT_EQ(title_hash(""), 2166136261u);
  EXPECT_EQ(title_hash("a"), 0xe40c292cu);  // FNV-1a 32 of "a"
  EXPECT_NE(title_hash("VLLM::EngineCore_DP0"), title_hash("VLLM::EngineCore_DP1"));
}
