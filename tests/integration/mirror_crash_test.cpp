// kill -9 of c2c-mirror-tool at random moments of an apply, then a restart that re-opens the
// pins and reconciles against the same desired table: it must always converge with no stale
// entry, and the generation must never go back (INV-4, INV-5, INV-7).
//
// Robust on a loaded machine: every wait on the tool has a generous deadline (a hung tool fails
// with its output instead of running into ctest's timeout), the kill delay adapts when the
// machine is slower or faster than at calibration, and the fixture removes its pins and files in
// TearDown whatever assertion failed.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "mirror/applier.hpp"
#include "mirror/generation_store.hpp"
#include "mirror/kernel_map.hpp"
#include "mirror/synthetic.hpp"
#include "mirror_test_env.hpp"

namespace c2c::mirror {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
// How long one step of the tool may take before the test calls it hung: far above the ~0.1 s an
// apply of 2000 entries takes, so that only a real hang trips it, even with -j2 and other builds.
constexpr std::chrono::seconds kDeadline{60};

// A running c2c-mirror-tool whose stdout we read line by line.
class ToolRun {
 public:
  explicit ToolRun(const std::vector<std::string>& args) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(C2C_MIRROR_TOOL));
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(C2C_MIRROR_TOOL, argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~ToolRun() {
    if (fd_ >= 0) ::close(fd_);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0 && fd_ >= 0; }
  // Reads until a line starting with `prefix` (returned), EOF or the deadline (""); all lines go
  // to output(), and timed_out() tells a hang from an exit.
  std::string wait_line(const std::string& prefix, std::chrono::seconds deadline = kDeadline) {
    const auto end = Clock::now() + deadline;
    while (true) {
      size_t nl;
      while ((nl = buf_.find('\n')) != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        out_ += line + "\n";
        if (line.rfind(prefix, 0) == 0) return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      const int r = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) {
        timed_out_ = true;
        return "";
      }
      char tmp[4096];
      ssize_t n = ::read(fd_, tmp, sizeof tmp);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return "";
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }
  bool timed_out() const { return timed_out_; }
  void kill9() { ::kill(pid_, SIGKILL); }
  int wait() {  // raw waitpid status; drains the pipe first (a tool hung past the deadline is killed)
    wait_line("\x01never");
    if (timed_out_) ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    reaped_ = true;
    return st;
  }
  const std::string& output() const { return out_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  bool timed_out_ = false;
  std::string buf_, out_;
};

uint64_t generation_of(const std::string& line) {  // "generation 17"
  return line.empty() ? 0 : std::stoull(line.substr(line.find(' ') + 1));
}

// Private pins and generation file, removed in TearDown whatever failed (an ASSERT returns from
// the test body; the fixture still runs).
class MirrorCrash : public ::testing::Test {
 protected:
  void SetUp() override {
    C2C_REQUIRE_BPFFS();
    root = testing::private_pin_root("crash");
    dir = fs::temp_directory_path() / ("c2c-mirror-crash-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override {
    if (!root.empty()) {
      if (std::string e = PinnedMaps::remove_pins(root); !e.empty()) ADD_FAILURE() << "teardown: " << e;
      EXPECT_FALSE(fs::exists(root)) << "teardown left " << root;
    }
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
  std::string root;
  fs::path dir;
};

TEST_F(MirrorCrash, KillNineDuringApplyAlwaysConverges) {
  const std::string gen_file = (dir / "generation").string();
  constexpr uint32_t kEntries = 2000;
  constexpr int kWantKills = 50;
  auto args = [&](uint64_t seed) {
    return std::vector<std::string>{"--pin-root", root, "apply", "--gen-file", gen_file, "--seed",
                                    std::to_string(seed), "--entries", std::to_string(kEntries),
                                    "--batch-size", "64", "--lease", "4"};
  };

  // Calibrate how long an apply takes on this machine now (from "apply-start" to its report).
  Clock::duration apply_time{};
  uint64_t last_gen = 0;
  {
    ToolRun run(args(0));
    ASSERT_TRUE(run.started());
    last_gen = generation_of(run.wait_line("generation "));
    ASSERT_NE(run.wait_line("apply-start"), "");
    auto t0 = Clock::now();
    ASSERT_NE(run.wait_line("ops "), "") << run.output();
    apply_time = Clock::now() - t0;
    ASSERT_EQ(run.wait(), 0) << run.output();
  }
  // The kill lands at a random moment of [0, max_delay_us) after apply-start. Load changes while
  // the test runs (and applies after the first are smaller): the window shrinks when a victim
  // finished before its kill and grows back when kills land, so that they keep landing inside
  // applies however fast or slow the machine is now.
  int64_t max_delay_us = std::max<int64_t>(200, std::chrono::duration_cast<std::chrono::microseconds>(apply_time).count());
  const int64_t calibrated_us = max_delay_us;

  std::mt19937_64 rng(20261130);
  int kills_in_apply = 0, kills_early = 0, finished_first = 0, trials = 0;
  for (uint64_t seed = 1; kills_in_apply < kWantKills && trials < 6 * kWantKills; ++seed, ++trials) {
    // Every fifth trial dies earlier: while opening pins, taking the lease or reading the map.
    const bool early = seed % 5 == 0;
    {
      ToolRun victim(args(seed));
      ASSERT_TRUE(victim.started());
      if (early) {
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
      } else {
        std::string g = victim.wait_line("generation ");
        if (!g.empty()) {
          ASSERT_GT(generation_of(g), last_gen) << "INV-4: a generation went back";
          last_gen = generation_of(g);
        }
        ASSERT_NE(victim.wait_line("apply-start"), "") << victim.output();
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(rng() % max_delay_us)));
      }
      victim.kill9();
      int st = victim.wait();
      const bool reported = victim.output().find("\nops ") != std::string::npos;
      ASSERT_FALSE(victim.timed_out()) << "seed " << seed << ": the tool hung\n" << victim.output();
      if (WIFSIGNALED(st) && !reported) {
        early ? ++kills_early : ++kills_in_apply;
        if (!early) max_delay_us = std::min<int64_t>(2 * calibrated_us, max_delay_us * 5 / 4 + 1);
      } else {
        ++finished_first;
        if (!early) max_delay_us = std::max<int64_t>(1, max_delay_us * 2 / 3);
      }
      if (early) {  // whatever it printed before dying must not go back either
        size_t at = victim.output().find("generation ");
        if (at != std::string::npos) {
          uint64_t g = generation_of(victim.output().substr(at, victim.output().find('\n', at) - at));
          ASSERT_GT(g, last_gen) << "INV-4";
          last_gen = g;
        }
      }
    }
    // Restart: re-open the pins, reconcile against the same desired table, to completion.
    ToolRun again(args(seed));
    ASSERT_TRUE(again.started());
    uint64_t g = generation_of(again.wait_line("generation "));
    ASSERT_GT(g, last_gen) << "INV-4: restart at seed " << seed << " went back";
    last_gen = g;
    ASSERT_EQ(again.wait(), 0) << (again.timed_out() ? "hung: " : "") << again.output();
    auto stored = load_generation(gen_file);
    ASSERT_TRUE(stored.ok()) << stored.error();
    ASSERT_GE(stored.value(), g) << "the used generation is covered on disk";

    PinOptions o;
    o.pin_root = root;
    o.create = false;
    auto maps = PinnedMaps::open(o);
    ASSERT_TRUE(maps.ok()) << maps.error();
    KernelPolicyMap map(maps.value()->policy_fd(), maps.value()->policy_max_entries());
    Applier reader(map);
    auto actual = reader.read_actual();
    ASSERT_TRUE(actual.ok()) << actual.error();
    const DesiredTable desired = synthetic_table(seed, kEntries, g);
    ASSERT_EQ(actual->entries.size(), desired.size()) << "seed " << seed << ": stale or missing entries";
    for (const auto& e : actual->entries) {
      auto it = desired.find(e.tid);
      ASSERT_NE(it, desired.end()) << "seed " << seed << ": stale tid " << e.tid << " (INV-5)";
      ASSERT_EQ(e.value, it->second) << "seed " << seed << ": tid " << e.tid;
    }
    EXPECT_TRUE(actual->warnings.empty());
  }
  std::printf("crash trials %d: killed during apply %d, killed before apply %d, finished before the kill %d "
              "(apply of %u entries took %lld us at calibration, kill window %lld us at the end)\n",
              trials, kills_in_apply, kills_early, finished_first, kEntries, static_cast<long long>(calibrated_us),
              static_cast<long long>(max_delay_us));
  EXPECT_GE(kills_in_apply, kWantKills) << "too few kills landed inside an apply";
}

}  // namespace
}  // namespace c2c::mirror
