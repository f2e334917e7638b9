// Names are bytes (issue 42; spec/state-machine.md, "Names are bytes"): a thread may name itself
// with any bytes and a process may set any argv[0]. What JSON shows of them (U+FFFD for each
// ill-formed part), what a terminal shows (\xNN for what is not text or acts on the terminal),
// what a regex matches (the JSON text), how the trace format carries them ({"hex": ...}), and how
// an error quotes input (echo).
#include <nlohmann/json.hpp>

#include <sstream>

#include "codec/trace_codec.hpp"
#include "core/names.hpp"
#include "core_fixture.hpp"
#include "trace/render.hpp"
#include "trace/replay.hpp"

namespace c2c::testing {
namespace {

const std::string kFffd = "\xef\xbf\xbd";

TEST(NameText, IsTheBytesWhenTheyAreUtf8) {
  for (const std::string s : {"", "EngineCore_DP0", "VLLM::EngineCor", "d\xc3\xa9""code", "\xe2\x82\xac", "\xf0\x9f\x98\x80"}) {
    EXPECT_TRUE(is_utf8(s)) << s;
    EXPECT_EQ(name_text(s), s);
  }
}

TEST(NameText, ReplacesEachMaximalIllFormedSubpartWithOneReplacementCharacter) {
  // Unicode's "best practice" examples (Unicode 15, §3.9 U+FFFD substitution): a truncated
  // sequence is one unit, a byte that can start nothing is one unit each.
  const std::pair<std::string, std::string> cases[] = {
      {"EngineCore\xff", "EngineCore" + kFffd},
      {"\xff\xfe", kFffd + kFffd},
      {"a\xf0\x9f\x98", "a" + kFffd},                  // truncated 4-byte sequence: one unit
      {"\xe2\x82", kFffd},                             // truncated 3-byte sequence
      {"\xc0\xaf", kFffd + kFffd},                     // overlong '/': C0 never starts a sequence
      {"\xed\xa0\x80", kFffd + kFffd + kFffd},         // a UTF-16 surrogate is not UTF-8
      {"\xf4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},  // above U+10FFFF
      {"\x80x", kFffd + "x"},                          // a lone continuation byte
  };
  for (const auto& [in, want] : cases) {
    EXPECT_FALSE(is_utf8(in));
    const std::string got = name_text(in);
    EXPECT_EQ(got, want) << nlohmann::json(got).dump();
    EXPECT_TRUE(is_utf8(got));
    EXPECT_NO_THROW((void)nlohmann::json(got).dump()) << "what JSON prints must be UTF-8";
  }
}

TEST(TerminalText, EscapesWhatIsNotTextOrActsOnTheTerminal) {
  EXPECT_EQ(terminal_text("EngineCore_DP0"), "EngineCore_DP0");
  EXPECT_EQ(terminal_text("d\xc3\xa9""code"), "d\xc3\xa9""code");          // text stays text
  EXPECT_EQ(terminal_text("EngineCore\xff"), "EngineCore\\xff");
  EXPECT_EQ(terminal_text("\x1b[2J\x1b[H"), "\\x1b[2J\\x1b[H");           // clear screen, cursor home
  EXPECT_EQ(terminal_text("a\tb\nc\rd"), "a\\x09b\\x0ac\\x0dd");         // a column, a row, a carriage return
  EXPECT_EQ(terminal_text("x\x7f"), "x\\x7f");
  EXPECT_EQ(terminal_text("\xc2\x9b""31m"), "\\xc2\\x9b31m");             // C1 CSI, as UTF-8
  EXPECT_EQ(terminal_text("ab\xe2\x80\xae""cd"), "ab\\xe2\\x80\\xaecd");   // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(terminal_text("\xe2\x80\xa8"), "\\xe2\\x80\\xa8");             // LINE SEPARATOR
  EXPECT_EQ(terminal_width(terminal_text("d\xc3\xa9""code")), 6u);
  EXPECT_EQ(terminal_width(terminal_text("EngineCore\xff")), 14u);
}

TEST(Echo, QuotesShortInputAsItIsAndLongInputCut) {
  EXPECT_EQ(echo("gpu"), "gpu");
  EXPECT_EQ(echo(std::string(64, 'k')), std::string(64, 'k'));
  EXPECT_EQ(echo(std::string(10'000, 'k')), std::string(64, 'k') + "... (10000 bytes)");
  // A cut never splits a character: 63 ASCII bytes then a 2-byte character end at byte 63.
  const std::string accented = std::string(63, 'a') + "\xc3\xa9" + std::string(100, 'b');
  EXPECT_EQ(echo(accented), std::string(63, 'a') + "... (165 bytes)");
  EXPECT_EQ(echo("\xff"), kFffd) << "an echo is text";
}

// The seed's kind of pattern against a name with a trailing 0xff byte, and a valid UTF-8 one.
class NamesAreBytes : public CoreTest {
 protected:
  void SetUp() override {
    applied(NodeInfoEvent{node_info()});
    applied(TaskSeen{task(100, 100, 1000, "EngineCore\xff")});
    applied(TaskSeen{task(101, 101, 1001, "EngineCore\xc3\xa9")});  // "EngineCoreé", valid UTF-8
    applied(TaskSeen{task(102, 102, 1002, "EngineCore\xff\xfe")});
    applied(TaskSeen{task(103, 103, 1003, "EngineCore")});
  }
  std::set<uint32_t> matched(const std::string& comm_regex, const std::string& title_regex = "") {
    auto p = engine_policy();
    p.command_regex = comm_regex;
    p.process_regex = title_regex;
    std::set<uint32_t> out;
    for (const auto& m : core.preview(p).matched) out.insert(m.key.tid);
    return out;
  }
};

TEST_F(NamesAreBytes, ARegexMatchesTheNamesTextWithReplacementCharacters) {
  EXPECT_EQ(matched("^EngineCore"), (std::set<uint32_t>{100, 101, 102, 103}));
  // One ill-formed byte is one character (U+FFFD), as 'é' is; two are two.
  EXPECT_EQ(matched("^EngineCore.$"), (std::set<uint32_t>{100, 101}));
  EXPECT_EQ(matched("^EngineCore\\x{FFFD}$"), (std::set<uint32_t>{100}));
  EXPECT_EQ(matched("^EngineCore\\x{FFFD}{2}$"), (std::set<uint32_t>{102}));
  EXPECT_EQ(matched("^EngineCore\xef\xbf\xbd"), (std::set<uint32_t>{100, 102}));
  EXPECT_EQ(matched("^EngineCore$"), (std::set<uint32_t>{103}));
}

TEST_F(NamesAreBytes, TheStoredPolicyMatchesAsThePreviewDoes) {
  auto p = engine_policy();
  p.command_regex = "^EngineCore.$";
  applied(NodePolicyUpsert{p});
  EXPECT_TRUE(core.desired().count(100));
  EXPECT_TRUE(core.desired().count(101));
  EXPECT_FALSE(core.desired().count(102));
  EXPECT_FALSE(core.desired().count(103));
  // A rename to another name that is not UTF-8 re-derives by the same rule.
  applied(TaskRenamed{{102, 1002}, "EngineCore\x80"});
  EXPECT_TRUE(core.desired().count(102));
  for (const auto& op : core.plan().ops) EXPECT_TRUE(is_utf8(op.reason)) << "a reason is text";
}

// The kernel keeps a newline in a comm (prctl(PR_SET_NAME, "x\ny") reads back from
// /proc/<tid>/comm as "x\ny\n"). The core refused such a name, so a rename to it was Invalid and
// the task kept the entry its former name had earned, explained by a name it no longer had.
TEST_F(NamesAreBytes, ANewlineIsAByteLikeAnyOther) {
  applied(NodePolicyUpsert{engine_policy()});  // ^EngineCore(_DP[0-9]+)?$
  applied(TaskSeen{task(400, 400, 4000, "EngineCore_DP0")});
  ASSERT_TRUE(core.desired().count(400));
  applied(TaskRenamed{{400, 4000}, "x\nEngineCore"});
  EXPECT_FALSE(core.desired().count(400)) << "the entry leaves with the name that earned it";
  applied(TaskSeen{task(401, 401, 4001, "EngineCore\n")});
  EXPECT_FALSE(core.desired().count(401)) << "$ does not match before a trailing newline in RE2";
  EXPECT_EQ(matched("^EngineCore\n$"), (std::set<uint32_t>{401}));
  EXPECT_EQ(terminal_text("x\nEngineCore"), "x\\x0aEngineCore");
}

TEST_F(NamesAreBytes, ProcessTitlesAreMatchedTheSameWay) {
  Task t = task(200, 200, 2000, "python3");
  t.title = "VLLM::EngineCore_DP0\xff";
  applied(TaskSeen{t});
  EXPECT_EQ(matched("", "^VLLM::EngineCore_DP0.$"), (std::set<uint32_t>{200}));
  EXPECT_EQ(matched("", "^VLLM::EngineCore_DP0$"), (std::set<uint32_t>{}));
}

TEST_F(NamesAreBytes, ThePreviewsHintQuotesANameAsText) {
  Task t = task(300, 300, 3000, "python3");
  t.title = "VLLM::EngineCore_DP0\xff";
  applied(TaskSeen{t});
  auto p = engine_policy();
  p.command_regex = "^EngineCore_DP0";  // matches no comm, but the title's part after "VLLM::"
  const auto pr = core.preview(p);
  bool hinted = false;
  for (const auto& w : pr.warnings) {
    EXPECT_TRUE(is_utf8(w)) << "a warning is text: " << w;
    hinted = hinted || w.find("VLLM::EngineCore_DP0" + kFffd) != std::string::npos;
  }
  EXPECT_TRUE(hinted);
}

TEST(TraceNames, ANameThatIsNotUtf8IsWrittenInHexAndReadBack) {
  Task t;
  t.key = {42, 7};
  t.tgid = 42;
  t.comm = "EngineCore\xff";
  t.title = "\xfe";
  t.cgroup = "/kp/\x80pod";
  const nlohmann::json j = codec::encode_event(TaskSeen{t});
  EXPECT_EQ(j["task"]["comm"], (nlohmann::json{{"hex", "456e67696e65436f7265ff"}}));
  EXPECT_EQ(j["task"]["title"], (nlohmann::json{{"hex", "fe"}}));
  EXPECT_EQ(j["task"]["cgroup"], (nlohmann::json{{"hex", "2f6b702f80706f64"}}));
  const std::string line = j.dump();  // would throw on raw invalid UTF-8
  auto back = codec::parse_line(line, 1);
  ASSERT_TRUE(std::holds_alternative<Event>(back)) << std::get<codec::ParseError>(back).to_string();
  const Task& r = std::get<TaskSeen>(std::get<Event>(back)).task;
  EXPECT_EQ(r.comm, t.comm);
  EXPECT_EQ(r.title, t.title);
  EXPECT_EQ(r.cgroup, t.cgroup);
  // A UTF-8 name keeps the string form every existing trace has.
  t.comm = "d\xc3\xa9""code";
  EXPECT_EQ(codec::encode_event(TaskSeen{t})["task"]["comm"], "d\xc3\xa9""code");
  const nlohmann::json renamed = codec::encode_event(TaskRenamed{{42, 7}, "\xff"});
  EXPECT_EQ(renamed["comm"], (nlohmann::json{{"hex", "ff"}}));
  auto rb = codec::parse_line(renamed.dump(), 3);
  ASSERT_TRUE(std::holds_alternative<Event>(rb));
  EXPECT_EQ(std::get<TaskRenamed>(std::get<Event>(rb)).comm, "\xff");
}

TEST(TraceNames, AMalformedHexNameNamesItsField) {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"v":1,"kind":"task_seen","task":{"tid":1,"start":1,"comm":{"hex":"f"}}})", "task.comm.hex"},
      {R"({"v":1,"kind":"task_seen","task":{"tid":1,"start":1,"comm":{"hex":"zz"}}})", "task.comm.hex"},
      {R"({"v":1,"kind":"task_seen","task":{"tid":1,"start":1,"comm":{"hex":"ff","x":1}}})", "task.comm.x"},
      {R"({"v":1,"kind":"task_seen","task":{"tid":1,"start":1,"comm":7}})", "task.comm"},
      {R"({"v":1,"kind":"task_renamed","tid":1,"start":1,"comm":{"hex":"00"}})", "comm"},  // NUL: the core refuses it
  };
  for (const auto& [line, field] : bad) {
    auto r = codec::parse_line(line, 5);
    ASSERT_TRUE(std::holds_alternative<codec::ParseError>(r)) << line;
    EXPECT_EQ(std::get<codec::ParseError>(r).field, field) << line;
    EXPECT_EQ(std::get<codec::ParseError>(r).line, 5u);
  }
  // A newline is a byte of a name like any other (JSON escapes it).
  auto nl = codec::parse_line(R"({"v":1,"kind":"task_renamed","tid":5,"start":1,"comm":"two\nlines"})", 6);
  ASSERT_TRUE(std::holds_alternative<Event>(nl));
  EXPECT_EQ(std::get<TaskRenamed>(std::get<Event>(nl)).comm, "two\nlines");
}

TEST(TraceNames, ATraceWithSuchANameReplaysAndRenders) {
  std::istringstream in(
      R"({"v":1,"kind":"node_info","node":{"name":"n1","cpus":"0-3"}})" "\n"
      R"({"v":1,"kind":"policy_upsert","policy":{"apiVersion":"scheduling.gthulhu.io/v1alpha1","kind":"NodeSchedulingPolicy","metadata":{"name":"p","generation":1},"spec":{"nodeNames":["n1"],"commandRegex":"^EngineCore.$","priority":1}}})" "\n"
      R"({"v":1,"kind":"task_seen","task":{"tid":9,"start":1,"comm":{"hex":"456e67696e65436f7265ff"},"cgroup":{"hex":"2f1b5b324a"}}})" "\n"
      R"({"v":1,"kind":"task_renamed","tid":9,"start":1,"comm":{"hex":"456e67696e65436f72651b"}})" "\n");
  auto parsed = codec::parse_trace(in);
  ASSERT_TRUE(std::holds_alternative<std::vector<codec::TraceEvent>>(parsed))
      << std::get<codec::ParseError>(parsed).to_string();
  const auto out = trace::replay(std::get<std::vector<codec::TraceEvent>>(parsed));
  EXPECT_FALSE(out.invalid);
  ASSERT_EQ(out.core.desired_size(), 1u) << "EngineCore + ESC is one character too";
  std::string json_text;
  ASSERT_NO_THROW(json_text = trace::to_json(out).dump());
  EXPECT_NE(json_text.find("/\\u001b[2J"), std::string::npos) << "JSON escapes the control character";
  const std::string table = trace::to_table(out);
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << "no raw ESC reaches the terminal";
  EXPECT_NE(table.find("EngineCore\\x1b"), std::string::npos) << table;
}

}  // namespace
}  // namespace c2c::testing
