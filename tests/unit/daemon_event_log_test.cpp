// The structured log records (daemon/process/event_log.hpp) and the logging set-up's pure parts: a line
// per accepted change and per intent transition with policy, generation, tasks and entries as
// fields; logfmt quoting; the zone in terminal timestamps; systemd's JOURNAL_STREAM test.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "daemon/process/event_log.hpp"
#include "daemon/process/logging.hpp"

namespace c2c::daemon {
namespace {

std::map<std::string, std::string> as_map(const LogRecord& r) {
  std::map<std::string, std::string> m;
  for (const auto& [k, v] : r.fields) m[k] = v;
  return m;
}

Intent intent(const std::string& policy, int64_t gen, IntentState st, uint32_t tasks, uint32_t entries) {
  Intent in;
  in.kind = PolicyKind::Node;
  in.policy = policy;
  in.generation = gen;
  in.state = st;
  in.matched_tasks = tasks;
  in.applied_entries = entries;
  return in;
}

TEST(DaemonEventLog, APolicyChangeNamesThePolicyItsGenerationAndTheTasks) {
  NodeSchedulingPolicy p;
  p.name = "vllm-enginecore";
  p.generation = 3;
  const LogRecord r = change_record(event_fields(NodePolicyUpsert{p}), 17, 2);
  EXPECT_TRUE(r.info);
  auto f = as_map(r);
  EXPECT_EQ(f["POLICY"], "NodeSchedulingPolicy/vllm-enginecore");
  EXPECT_EQ(f["GENERATION"], "3");
  EXPECT_EQ(f["NODE_GENERATION"], "17");
  EXPECT_EQ(f["TASKS"], "2");
  EXPECT_EQ(logfmt(r).rfind("change accepted event=", 0), 0u) << logfmt(r);
}

TEST(DaemonEventLog, HostTaskChurnIsDebugNotInfo) {
  Task t;
  t.key.tid = 42;
  EXPECT_FALSE(change_record(event_fields(TaskSeen{t}), 5, 1).info);
  EXPECT_TRUE(change_record(event_fields(ClaimDeallocated{"uid-1", 4}), 5, 0).info);
  EXPECT_EQ(as_map(change_record(event_fields(ClaimDeallocated{"uid-1", 4}), 5, 0))["CLAIM"], "uid-1");
}

TEST(DaemonEventLog, OneRecordPerIntentTransitionAndNoneForATimestampAlone) {
  std::vector<Intent> before{intent("a", 1, IntentState::Sent, 2, 0), intent("b", 1, IntentState::Applied, 1, 1),
                             intent("gone", 2, IntentState::Applied, 0, 0)};
  std::vector<Intent> after{intent("a", 1, IntentState::Applied, 2, 2), intent("b", 1, IntentState::Applied, 1, 1),
                            intent("c", 1, IntentState::Pending, 0, 0)};
  after[1].updated_unix_ms = 999;  // only the timestamp moved: no transition
  const auto rs = intent_records(before, after);
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(rs[0].message, "intent SENT -> APPLIED");
  auto f = as_map(rs[0]);
  EXPECT_EQ(f["POLICY"], "NodeSchedulingPolicy/a");
  EXPECT_EQ(f["GENERATION"], "1");
  EXPECT_EQ(f["TASKS"], "2");
  EXPECT_EQ(f["ENTRIES"], "2");
  EXPECT_EQ(f["INTENT_FROM"], "SENT");
  EXPECT_EQ(rs[1].message, "intent NEW -> PENDING");
  EXPECT_EQ(rs[2].message, "intent APPLIED -> REMOVED");
  EXPECT_EQ(as_map(rs[2])["POLICY"], "NodeSchedulingPolicy/gone");
}

TEST(DaemonEventLog, LogfmtQuotesValuesThatWouldSplitTheLine) {
  LogRecord r;
  r.message = "intent SENT -> FAILED";
  r.fields = {{"POLICY", "NodeSchedulingPolicy/a"}, {"REASON", "map full: \"c2c_policy\" a=b"}, {"EMPTY", ""}};
  EXPECT_EQ(logfmt(r), "intent SENT -> FAILED policy=NodeSchedulingPolicy/a reason=\"map full: \\\"c2c_policy\\\" a=b\" empty=\"\"");
}

TEST(DaemonLogging, TerminalTimestampsCarryTheirZone) {
  EXPECT_NE(log_pattern(false).find("%z"), std::string::npos) << log_pattern(false);
  EXPECT_EQ(log_pattern(true).find("%z"), std::string::npos) << "journald adds its own timestamp";
}

TEST(DaemonLogging, JournalStreamMustNameThisStderr) {
  EXPECT_TRUE(journal_stream_is("8:12345", 8, 12345));
  EXPECT_FALSE(journal_stream_is(nullptr, 8, 12345));
  EXPECT_FALSE(journal_stream_is("8:12346", 8, 12345)) << "inherited by a child whose stderr moved";
  EXPECT_FALSE(journal_stream_is("8:12345x", 8, 12345));
  EXPECT_FALSE(journal_stream_is("garbage", 8, 12345));
}

}  // namespace
}  // namespace c2c::daemon
