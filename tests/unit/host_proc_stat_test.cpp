// /proc/<tgid>/task/<tid>/stat parsing: comm with spaces and ')' and malformed lines.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "host/proc_stat.hpp"

using c2c::host::parse_stat;
using c2c::host::ParseError;

namespace {

// A stat line with `comm` and start time `start` (field 22); other fields are plausible values.
std::string stat_line(const std::string& pid, const std::string& comm, const std::string& start) {
  return pid + " (" + comm + ") S 1 " + pid +
         " 0 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 " + start +
         " 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
}

TEST(HostProcStat, ParsesPlainLine) {
  const auto f = parse_stat(stat_line("4242", "EngineCore_DP0", "123456"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->pid, 4242u);
  EXPECT_EQ(f->comm, "EngineCore_DP0");
  EXPECT_EQ(f->state, 'S');
  EXPECT_EQ(f->ppid, 1u);
  EXPECT_EQ(f->start_ticks, 123456u);
}

TEST(HostProcStat, CommWithSpacesAndParentheses) {
  // The fixed fields start after the LAST ')': a comm of "a) S 9 (b" must not shift them.
  for (const std::string comm : {"a b", "x)", ") S 9 (", "a) S 9 (b", "((()))", " ", "weird ) 1 2 3"}) {
    const auto f = parse_stat(stat_line("77", comm, "987"));
    ASSERT_TRUE(f) << comm;
    EXPECT_EQ(f->comm, comm);
    EXPECT_EQ(f->start_ticks, 987u) << comm;
    EXPECT_EQ(f->ppid, 1u) << comm;
  }
}

TEST(HostProcStat, LongWorkqueueCommIsAccepted) {
  const auto f = parse_stat(stat_line("12", "kworker/0:1-events_power_efficient", "5"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->comm, "kworker/0:1-events_power_efficient");
}

TEST(HostProcStat, MalformedLinesNameTheField) {
  struct Case {
    std::string line;
    std::string field;
  };
  const Case cases[] = {
      {"", "stat.comm"},
      {"123 comm S 1", "stat.comm"},
      {"abc (x) S 1", "stat.pid"},
      {"0 (x) S 1", "stat.pid"},
      {"99999999999 (x) S 1", "stat.pid"},
      {"12 (x S 1 2 3", "stat.comm"},
      {"12 (x) SS 1", "stat.state"},
      {"12 (x) S one", "stat.ppid"},
      {"12 (x) S 1 2 3", "stat.starttime"},
      {stat_line("12", "x", "12a"), "stat.starttime"},
      {stat_line("12", "x", "-5"), "stat.starttime"},
  };
  for (const auto& c : cases) {
    ParseError err;
    EXPECT_FALSE(parse_stat(c.line, &err)) << c.line;
    EXPECT_EQ(err.field, c.field) << c.line << " -> " << err.to_string();
    EXPECT_FALSE(err.message.empty());
  }
}

TEST(HostProcStat, ParsesOwnStatFile) {
  std::ifstream in("/proc/self/stat");
  ASSERT_TRUE(in) << "no /proc/self/stat";
  std::stringstream ss;
  ss << in.rdbuf();
  ParseError err;
  const auto f = parse_stat(ss.str(), &err);
  ASSERT_TRUE(f) << err.to_string();
  EXPECT_EQ(f->pid, static_cast<uint32_t>(::getpid()));
  EXPECT_GT(f->start_ticks, 0u);
}

TEST(HostProcStat, ParseU64RejectsPartialNumbers) {
  EXPECT_EQ(c2c::host::parse_u64("42"), 42u);
  EXPECT_FALSE(c2c::host::parse_u64(""));
  EXPECT_FALSE(c2c::host::parse_u64("4 2"));
  EXPECT_FALSE(c2c::host::parse_u64("42\n"));
  EXPECT_FALSE(c2c::host::parse_u64("99999999999999999999999"));
}

}  // namespace
