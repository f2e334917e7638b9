// The trace format: every malformed line is a clear error naming the line and the field.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "codec/trace_codec.hpp"
#include "codec/json_reader.hpp"
#include "trace/replay.hpp"
#include "source_dir.hpp"

namespace c2c::codec {
namespace {

ParseError error_of(const std::string& line) {
  auto r = parse_line(line, 7);
  EXPECT_TRUE(std::holds_alternative<ParseError>(r)) << "accepted: " << line;
  return std::holds_alternative<ParseError>(r) ? std::get<ParseError>(r) : ParseError{};
}

const std::string kPolicyHead =
    R"({"v":1,"kind":"policy_upsert","policy":{"apiVersion":"scheduling.gthulhu.io/v1alpha1","kind":"NodeSchedulingPolicy","metadata":{"name":"p"},"spec":{"nodeNames":["n"],)";

TEST(TraceCodec, MalformedInputNamesLineAndField) {
  EXPECT_EQ(error_of(R"({"v":1,"kind":"nonsense"})").field, "kind");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"nonsense"})").line, 7u);
  EXPECT_EQ(error_of(R"({"kind":"task_seen"})").field, "v");
  EXPECT_EQ(error_of(R"({"v":2,"kind":"sync_complete"})").field, "v");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"task_seen","task":{"tid":"12","start":1,"comm":"x"}})").field, "task.tid");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"task_seen","task":{"tid":-3,"start":1,"comm":"x"}})").field, "task.tid");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"task_seen","task":{"tid":3,"start":1,"comm":"x","cpuset":"0-300"}})").field, "task.cpuset");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"task_seen","task":{"tid":3,"start":1,"comm":"x","colour":"red"}})").field, "task.colour");
  EXPECT_EQ(error_of(kPolicyHead + R"("commandRegex":"(x","priority":1}}})").field, "policy.spec.commandRegex");
  EXPECT_EQ(error_of(kPolicyHead + R"("commandRegex":"x","executionTime":-5}}})").field, "policy.spec.executionTime");
  EXPECT_EQ(error_of(kPolicyHead + R"("commandRegex":"x","executionTime":999999999999}}})").field, "policy.spec.executionTime");
  EXPECT_EQ(error_of(kPolicyHead + R"("commandRegex":"x","priority":-1}}})").field, "policy.spec.priority");
  EXPECT_EQ(error_of(kPolicyHead + R"("commandRegex":"x","prio":1}}})").field, "policy.spec.prio");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"claim_allocated","claim":{"uid":"u","generation":1,"devices":[{"driver":"d","pool":"p","device":"x","cpus":"9-2"}]}})").field,
            "claim.devices[0].cpus");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"time_advance","now":1.5})").field, "now");
  EXPECT_NE(error_of("{not json").message.find("not valid JSON"), std::string::npos);
  EXPECT_EQ(error_of("[1,2]").field, "(root)");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"time_advance","now":1,"maxRenewals":-1})").field, "maxRenewals");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"time_advance","now":1,"maxRenewals":4294967296})").field, "maxRenewals");
  auto ok = parse_line(R"({"v":1,"kind":"time_advance","now":1})", 1);
  ASSERT_TRUE(std::holds_alternative<Event>(ok));
  EXPECT_EQ(std::get<TimeAdvance>(std::get<Event>(ok)).now, 1u);
  EXPECT_FALSE(std::get<TimeAdvance>(std::get<Event>(ok)).max_renewals) << "absent: every due lease";
  // A bounded renewal step keeps its bound through the codec (0 included: time moves, nothing renewed).
  for (uint32_t bound : {0u, 512u}) {
    const TimeAdvance t{7, bound};
    const Event back = decode_event(encode_event(Event{t}));
    EXPECT_EQ(std::get<TimeAdvance>(back).max_renewals, std::optional<uint32_t>{bound});
    EXPECT_EQ(encode_event(Event{t}).at("maxRenewals"), bound);
  }
}

TEST(TraceCodec, EveryEventRoundTrips) {
  std::ifstream f(c2c::test::source_dir() + "/examples/llm-node.jsonl");
  ASSERT_TRUE(f) << "examples/llm-node.jsonl";
  auto parsed = parse_trace(f);
  ASSERT_TRUE(std::holds_alternative<std::vector<TraceEvent>>(parsed)) << std::get<ParseError>(parsed).to_string();
  for (const auto& te : std::get<std::vector<TraceEvent>>(parsed)) {
    auto again = decode_event(encode_event(te.event));
    EXPECT_EQ(encode_event(again).dump(), encode_event(te.event).dump()) << "line " << te.line;
  }
}

TEST(TraceCodec, ParseTraceStopsAtTheFirstErrorWithItsLineNumber) {
  std::istringstream in(R"({"v":1,"kind":"sync_complete"}

{"v":1,"kind":"bpf_synced"}
{"v":1,"kind":"time_advance","now":"soon"})");
  auto parsed = parse_trace(in);
  ASSERT_TRUE(std::holds_alternative<ParseError>(parsed));
  EXPECT_EQ(std::get<ParseError>(parsed).line, 4u);
  EXPECT_EQ(std::get<ParseError>(parsed).field, "now");
}

// fuzz_trace_parser found it: nlohmann reports a number it cannot hold as out_of_range 406, not
// as a parse_error, and parse_trace let it escape (claim2core replay died in std::terminate).
TEST(TraceCodec, ANumberOverflowIsAParseErrorNotAnException) {
  std::istringstream in("{\"v\":1,\"kind\":\"sync_complete\"}\n{\"v\":3e786010,\"kind\":\"bpf_synced\"}\n");
  std::variant<std::vector<TraceEvent>, ParseError> parsed;
  ASSERT_NO_THROW(parsed = parse_trace(in));
  ASSERT_TRUE(std::holds_alternative<ParseError>(parsed));
  EXPECT_EQ(std::get<ParseError>(parsed).line, 2u);
  EXPECT_NE(std::get<ParseError>(parsed).message.find("number overflow"), std::string::npos);
}

// Issue #12 item 6: a duplicate key is refused, naming the line and the key (JSON leaves it
// undefined; nlohmann kept the last one silently).
TEST(TraceCodec, DuplicateKeysAreRefusedNamingTheKey) {
  auto e = error_of(R"({"v":1,"kind":"task_seen","task":{"tid":5,"start":1,"comm":"a","comm":"b"}})");
  EXPECT_EQ(e.line, 7u);
  EXPECT_EQ(e.field, "task.comm");
  EXPECT_NE(e.message.find("duplicate key"), std::string::npos) << e.message;
  EXPECT_EQ(error_of(R"({"v":1,"kind":"sync_complete","kind":"bpf_synced"})").field, "kind");
  auto nested = error_of(
      R"({"v":1,"kind":"claim_allocated","claim":{"uid":"c","generation":1,"devices":[{"request":"r","driver":"d","pool":"p","device":"x"},{"request":"r","driver":"d","pool":"p","pool":"q","device":"y"}]}})");
  EXPECT_EQ(nested.field, "claim.devices[1].pool");
  // The same key in different objects is fine.
  auto ok = parse_line(R"({"v":1,"kind":"task_seen","task":{"tid":5,"start":1,"comm":"a","cgroup":"/a"}})", 1);
  EXPECT_TRUE(std::holds_alternative<Event>(ok));
}

// Issue #12 item 6: everything the core refuses without looking at the state is refused when the
// trace is decoded, so a bad line 4 means lines 1-3 are not applied either.
TEST(TraceCodec, StatelessValidationHappensBeforeAnythingIsApplied) {
  std::istringstream in(R"({"v":1,"kind":"node_info","node":{"name":"n","cpus":"0-3"}}
{"v":1,"kind":"task_seen","task":{"tid":5,"start":1,"comm":"a"}}
{"v":1,"kind":"task_seen","task":{"tid":6,"start":1,"comm":"b"}}
{"v":1,"kind":"task_seen","task":{"tid":7,"start":1,"comm":"a-comm-longer-than-15"}}
)");
  auto parsed = parse_trace(in);
  ASSERT_TRUE(std::holds_alternative<ParseError>(parsed));
  EXPECT_EQ(std::get<ParseError>(parsed).line, 4u);
  EXPECT_EQ(std::get<ParseError>(parsed).field, "task.comm");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"task_renamed","tid":5,"start":1,"comm":"a\u0000b"})").field, "comm");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"task_seen","task":{"tid":5,"start":1,"comm":"a\u0000b"}})").field, "task.comm");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"pod_bound","pod":{"uid":"p","cpuset":""}})").field, "pod.cpuset");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"claim_deallocated","uid":"c","generation":9007199254740993})").field,
            "generation");
  EXPECT_EQ(error_of(R"({"v":1,"kind":"policy_upsert","policy":{"apiVersion":"scheduling.gthulhu.io/v1alpha1","kind":"NodeSchedulingPolicy","metadata":{"name":"p","generation":9223372036854775807},"spec":{"nodeNames":["n"],"commandRegex":"x"}}})")
                .field,
            "policy.metadata.generation");
}

TEST(TraceCodec, Durations) {
  // Go's time.ParseDuration / Kubernetes metav1.Duration syntax.
  EXPECT_EQ(parse_duration_ns("1.5s"), 1'500'000'000ull);
  EXPECT_EQ(parse_duration_ns(".5s"), 500'000'000ull);
  EXPECT_EQ(parse_duration_ns("2h45m"), 9'900'000'000'000ull);
  EXPECT_EQ(parse_duration_ns("1m30.25s"), 90'250'000'000ull);
  EXPECT_EQ(parse_duration_ns("+5ms"), 5'000'000ull);
  EXPECT_EQ(parse_duration_ns("0"), 0ull);
  EXPECT_EQ(parse_duration_ns("1.0000000005s"), 1'000'000'000ull);  // below 1 ns is cut
  EXPECT_EQ(parse_duration_ns("3\u00b5s"), 3'000ull);
  EXPECT_FALSE(parse_duration_ns("-1s"));
  EXPECT_FALSE(parse_duration_ns("1.s5"));
  EXPECT_FALSE(parse_duration_ns("1.5"));
  EXPECT_FALSE(parse_duration_ns("."));
  EXPECT_FALSE(parse_duration_ns(""));
  EXPECT_EQ(parse_duration_ns("30s"), 30'000'000'000ull);
  EXPECT_EQ(parse_duration_ns("1m30s"), 90'000'000'000ull);
  EXPECT_EQ(parse_duration_ns("500ms"), 500'000'000ull);
  EXPECT_FALSE(parse_duration_ns("30"));
  EXPECT_FALSE(parse_duration_ns("s"));
  EXPECT_FALSE(parse_duration_ns("99999999999999999999h"));
  EXPECT_EQ(format_duration(30'000'000'000ull), "30s");
}

TEST(Replay, TheExampleHoldsEveryInvariantAndShowsTheSeedScenario) {
  std::ifstream f(c2c::test::source_dir() + "/examples/llm-node.jsonl");
  auto events = std::get<std::vector<TraceEvent>>(parse_trace(f));
  auto out = trace::replay(events);
  EXPECT_TRUE(out.violations.empty());
  EXPECT_FALSE(out.invalid.has_value());
  auto j = trace::to_json(out);
  for (const char* id : trace::kInvariantIds) EXPECT_EQ(j["verdicts"][id], "holds") << id;
  // The stale re-allocation at the end is ignored (INV-3), the reused tid is rewritten (INV-2).
  ASSERT_EQ(out.ignored.size(), 1u);
  EXPECT_NE(out.ignored[0].message.find("INV-3"), std::string::npos);
  bool reuse = false;
  for (const auto& op : j["plan"]["ops"]) reuse = reuse || op["reason"].get<std::string>().find("tid reused") != std::string::npos;
  EXPECT_TRUE(reuse);
}

}  // namespace
}  // namespace c2c::codec
