// -o json / -o yaml / -o table of the daemon's replies, without a daemon.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "api/convert.hpp"
#include "cli/structured_output.hpp"
#include "api/proto_json.hpp"
#include "api/replies_proto.hpp"
#include "cli/tables.hpp"
#include "cli/listing.hpp"
#include "codec/yaml_json.hpp"

namespace c2c::cli {
namespace {

namespace pb = ::claim2core::v1;
using api::proto_to_json;

// The replies as the client library hands them over: the wire message through api::plain.
reply::Policies policies_of(const pb::ListPoliciesResponse& r) {
  auto p = api::plain(r);
  EXPECT_TRUE(p.ok()) << p.error.field << ": " << p.error.message;
  return p.value.value_or(reply::Policies{});
}

using nlohmann::json;

pb::StatusResponse sample_status() {
  pb::StatusResponse s;
  s.set_node("dgx-spark-gb10");
  s.set_node_generation(12345678901234ull);  // above 2^32: must stay a number
  s.set_scheduler_enforcing(false);
  s.set_scheduler_message("no sched_ext on this kernel: the pinned maps are kept current, nothing enforces them");
  s.set_state_digest("00ff");
  s.add_violations("INV-5: tid 7 unexplained");
  return s;
}

TEST(CliOutput, ProtoJsonKeepsDefaultsAnd64BitNumbers) {
  json j = proto_to_json(sample_status());
  EXPECT_EQ(j["nodeGeneration"], 12345678901234ull);
  ASSERT_TRUE(j.contains("schedulerEnforcing"));
  EXPECT_EQ(j["schedulerEnforcing"], false);
  EXPECT_EQ(j["restartEpoch"], 0);
  EXPECT_EQ(j["violations"], json::array({"INV-5: tid 7 unexplained"}));
  EXPECT_EQ(j["stateDigest"], "00ff");
}

TEST(CliOutput, ProtoJsonEnumsMapsOneofsAndUnsetMessages) {
  pb::ListIntentsResponse r;
  auto* i = r.add_intents();
  i->set_kind(pb::NODE_SCHEDULING_POLICY);
  i->set_policy("vllm-enginecore");
  i->set_state(pb::APPLIED);
  json j = proto_to_json(r);
  EXPECT_EQ(j["intents"][0]["state"], "APPLIED");
  EXPECT_EQ(j["intents"][0]["kind"], "NODE_SCHEDULING_POLICY");

  NodeSchedulingPolicy n;
  n.name = "vllm-enginecore";
  n.node_selectors = {{"nvidia.com/gpu.product", "NVIDIA-GB10"}};
  n.command_regex = "^EngineCore(_DP[0-9]+)?$";
  pb::Policy p = api::to_proto(c2c::AnyPolicy{n});
  json pj = proto_to_json(p);
  EXPECT_TRUE(pj.contains("node"));
  EXPECT_FALSE(pj.contains("dra")) << "an unset oneof member is not printed";
  EXPECT_EQ(pj["node"]["nodeSelectors"]["nvidia.com/gpu.product"], "NVIDIA-GB10");

  pb::MatchedTask m;
  m.set_tid(3786004);
  json mj = proto_to_json(m);
  EXPECT_TRUE(mj["actual"].is_null());
}

// The YAML printer's output reads back (through the same core-schema typing as manifests) as
// the JSON it came from, including strings that look like numbers, booleans or null.
TEST(CliOutput, YamlRoundTripsThroughTheManifestReader) {
  json j = {{"name", "0"},      {"bool", "true"},       {"none", "null"}, {"empty", ""},
            {"neg", "-1"},      {"regex", "^EngineCore(_DP[0-9]+)?$"},     {"colon", "a: b"},
            {"n", 42},          {"big", 12345678901234ull},                 {"f", false},
            {"list", {1, "2"}}, {"nothing", json::array()},                 {"obj", {{"k", {{"deep", "yes"}}}}},
            {"123", "numeric key"}};
  std::string yaml = json_to_yaml(j);
  auto back = codec::yaml_to_json(yaml);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0], j) << yaml;
}

TEST(CliOutput, FormatNames) {
  EXPECT_EQ(output_format_from_string("yaml"), OutputFormat::Yaml);
  EXPECT_THROW(output_format_from_string("xml"), std::invalid_argument);
  EXPECT_EQ(format_ns(2'000'000), "2ms");
  EXPECT_EQ(format_ns(30'000'000'000ull), "30s");
  EXPECT_EQ(format_ns(1500), "1500ns");
}

TEST(CliOutput, TablesAlignColumnsAndNameStates) {
  pb::ListIntentsResponse r;
  auto* i = r.add_intents();
  i->set_kind(pb::NODE_SCHEDULING_POLICY);
  i->set_policy("vllm-enginecore");
  i->set_policy_generation(1);
  i->set_node("dgx-spark-gb10");
  i->set_state(pb::APPLIED);
  i->set_matched_tasks(2);
  i->set_applied_entries(2);
  auto* f = r.add_intents();
  f->set_kind(pb::DRA_EXECUTION_POLICY);
  f->set_policy("llm-decode");
  f->set_state(pb::PENDING);
  f->set_reason("requirePreview: no acknowledged preview at generation 1");
  std::string t = render_intents(api::plain(r));
  EXPECT_NE(t.find("KIND                  POLICY           GENERATION"), std::string::npos) << t;
  EXPECT_NE(t.find("NodeSchedulingPolicy  vllm-enginecore  1           dgx-spark-gb10  Applied  2      2"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("Pending  0      0        requirePreview"), std::string::npos) << t;
  EXPECT_EQ(render_intents(api::plain(pb::ListIntentsResponse{})), "No intents.\n");
}

TEST(CliOutput, StatusSaysPlainlyWhetherAnythingEnforces) {
  std::string t = render_status(api::plain(sample_status()));
  EXPECT_NE(t.find("scheduler:          NOT enforcing"), std::string::npos) << t;
  EXPECT_NE(t.find("no sched_ext on this kernel"), std::string::npos) << t;
  EXPECT_NE(t.find("VIOLATION:          INV-5"), std::string::npos) << t;
  EXPECT_NE(t.find("node generation:    12345678901234"), std::string::npos) << t;
}

TEST(CliOutput, StatusShowsPinsRestoredUnderTheDaemonOnlyWhenThereWereAny) {
  auto r = sample_status();
  EXPECT_EQ(render_status(api::plain(r)).find("pins restored"), std::string::npos);
  r.set_pins_restored(4);
  r.set_pin_repair("/sys/fs/bpf/claim2core/c2c_policy: deleted");
  EXPECT_NE(render_status(api::plain(r)).find("pins restored:      4 (last: /sys/fs/bpf/claim2core/c2c_policy: deleted)"),
            std::string::npos)
      << render_status(api::plain(r));
}

TEST(CliOutput, ExplainShowsTheLineageChain) {
  pb::ExplainResponse r;
  r.set_found(true);
  auto* l = r.mutable_lineage();
  l->set_tid(3786004);
  l->set_start(955400);
  l->set_tgid(3785998);
  l->set_comm("EngineCore_DP0");
  l->set_cgroup("/system.slice/vllm.service");
  l->set_policy_kind(pb::NODE_SCHEDULING_POLICY);
  l->set_policy("vllm-enginecore");
  l->set_policy_generation(1);
  l->set_strategy("exact-tid");
  l->mutable_entry()->set_execution_class("latency-critical");
  l->mutable_entry()->set_slice_ns(2'000'000);
  std::string t = render_explain(3786004, api::plain(r));
  EXPECT_NE(t.find("tid 3786004 (start 955400, tgid 3785998, comm 'EngineCore_DP0')"), std::string::npos) << t;
  EXPECT_NE(t.find("latency-critical slice 2ms"), std::string::npos) << t;
  EXPECT_NE(t.find("cgroup /system.slice/vllm.service -> task 3786004 -> NodeSchedulingPolicy/vllm-enginecore@1 "
                   "(exact-tid)"),
            std::string::npos)
      << t;
  EXPECT_EQ(render_explain(5, api::plain(pb::ExplainResponse{})), "tid 5: no policy entry (no live lineage)\n");
}

// Boost inheritance (issue 43 item 3): the scheduler's count of the thread's runs boosted as a
// boosted thread's wakee, and its last waker, only when there were any.
TEST(CliOutput, ExplainSaysFromWhomABoostWasInherited) {
  pb::ExplainResponse r;
  r.set_found(true);
  auto* l = r.mutable_lineage();
  l->set_tid(4001);
  l->set_tgid(4000);
  l->set_policy_kind(pb::NODE_SCHEDULING_POLICY);
  l->set_policy("vllm-workers");
  EXPECT_EQ(render_explain(4001, api::plain(r)).find("inherited"), std::string::npos);
  r.mutable_inherited()->set_runs(37);
  r.mutable_inherited()->set_from_tid(3998);
  r.mutable_inherited()->set_depth(1);
  const std::string t = render_explain(4001, api::plain(r));
  EXPECT_NE(t.find("boost:    boost inherited from tid 3998 (depth 1; 37 runs boosted as a wakee)"), std::string::npos) << t;
}

TEST(CliOutput, PreviewTableSaysReadOnlyAndMarksLosersAndAbsentEntries) {
  pb::PreviewResponse r;
  r.set_policy("NodeSchedulingPolicy/vllm-enginecore");
  r.set_policy_generation(1);
  auto* m = r.add_matched();
  m->set_tid(3786004);
  m->set_comm("EngineCore_DP0");
  m->set_strategy("exact-tid");
  m->mutable_intended()->set_execution_class("latency-critical");
  auto* lost = r.add_matched();
  lost->set_tid(3786005);
  lost->set_comm("EngineCore_DP1");
  r.add_warnings("regex matches 2 threads");
  r.set_acknowledged(true);
  std::string t = render_preview(api::plain(r));
  EXPECT_NE(t.find("read-only, nothing was written"), std::string::npos) << t;
  EXPECT_NE(t.find("(loses a conflict)"), std::string::npos) << t;
  EXPECT_NE(t.find("(not in the map)"), std::string::npos) << t;
  EXPECT_NE(t.find("warning: regex matches 2 threads"), std::string::npos) << t;
  EXPECT_NE(t.find("Acknowledged: NodeSchedulingPolicy/vllm-enginecore may go live at generation 1"), std::string::npos)
      << t;
}

TEST(CliOutput, PoliciesTableSummarisesBothKinds) {
  pb::ListPoliciesResponse r;
  NodeSchedulingPolicy n;
  n.name = "vllm-enginecore";
  n.generation = 1;
  n.node_names = {"dgx-spark-gb10"};
  n.command_regex = "^EngineCore(_DP[0-9]+)?$";
  n.priority = 1;
  n.execution_time = 2'000'000;
  *r.add_policies() = api::to_proto(c2c::AnyPolicy{n});
  DraExecutionPolicy d;
  d.name = "llm-decode";
  d.resource_claims = {"gpu", "rdma"};
  d.task_roles = {TaskRole{"decode", "decode", "", ExecClass::LatencyCritical}};
  d.require_preview = true;
  *r.add_policies() = api::to_proto(c2c::AnyPolicy{d});
  std::string t = render_policies(policies_of(r));
  EXPECT_NE(t.find("nodes dgx-spark-gb10; comm =~ ^EngineCore(_DP[0-9]+)?$"), std::string::npos) << t;
  EXPECT_NE(t.find("priority 1, slice 2ms"), std::string::npos) << t;
  EXPECT_NE(t.find("claims gpu,rdma"), std::string::npos) << t;
  EXPECT_NE(t.find("decode:latency-critical, requirePreview"), std::string::npos) << t;
}

// Issue #14: `get policies` shows a label selector and why this node is not selected.
TEST(CliOutput, PoliciesTableSaysWhyTheNodeIsNotSelected) {
  pb::ListPoliciesResponse r;
  NodeSchedulingPolicy n;
  n.name = "gpu-nodes";
  n.generation = 1;
  n.node_selector_expressions = {{"gpu", LabelOperator::In, {"a100", "h100"}}};
  n.command_regex = "^x$";
  *r.add_policies() = api::to_proto(c2c::AnyPolicy{n});
  auto* why = r.add_node_not_selected();
  why->set_name("gpu-nodes");
  why->set_reason("nodeSelectors.matchExpressions[0]: gpu In [a100, h100], but the node has no label gpu");
  std::string t = render_policies(policies_of(r));
  EXPECT_NE(t.find("nodeSelectors gpu In (a100,h100)"), std::string::npos) << t;
  EXPECT_NE(t.find("node not selected: nodeSelectors.matchExpressions[0]: gpu In [a100, h100], but the node has no "
                   "label gpu"),
            std::string::npos)
      << t;
}

// Names are bytes (issue 42): a thread named with bytes that are not UTF-8, or with control
// characters, is printed as text (-o json/yaml: U+FFFD) and escaped in tables (\xNN), so neither
// the output nor the terminal breaks.
pb::ListTasksResponse odd_tasks() {
  pb::ListTasksResponse r;
  auto* t = r.add_tasks();
  t->set_tid(4107);
  t->set_tgid(4101);
  t->set_comm("EngineCore\xff");
  t->set_title("evil\x1b[2J\tcol\nrow");
  t->set_cgroup("/user.slice/\xfe");
  auto* u = r.add_tasks();
  u->set_tid(4108);
  u->set_tgid(4101);
  u->set_comm("d\xc3\xa9""code");
  return r;
}

TEST(CliOutput, NamesThatAreNotUtf8PrintAsTextInJsonAndYaml) {
  const auto r = odd_tasks();
  json j = proto_to_json(r);
  std::string text;
  ASSERT_NO_THROW(text = j.dump()) << "nlohmann refuses raw invalid UTF-8";
  EXPECT_EQ(j["tasks"][0]["comm"], "EngineCore\xef\xbf\xbd");
  EXPECT_EQ(j["tasks"][0]["cgroup"], "/user.slice/\xef\xbf\xbd");
  EXPECT_EQ(j["tasks"][1]["comm"], "d\xc3\xa9""code");
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "JSON escapes control characters";
  for (auto f : {GetFormat::Json, GetFormat::Yaml}) {
    std::string out;
    ASSERT_NO_THROW(out = render_listing(tasks_listing(api::plain(r)), f));
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find('\xff'), std::string::npos) << out;
    EXPECT_NE(out.find("EngineCore\xef\xbf\xbd"), std::string::npos) << out;
  }
}

TEST(CliOutput, NamesInTablesCannotMoveTheCursorOrAddAColumn) {
  const std::string t = render_listing(tasks_listing(api::plain(odd_tasks())), GetFormat::Wide);
  EXPECT_EQ(t.find('\x1b'), std::string::npos) << t;
  EXPECT_EQ(t.find('\t'), std::string::npos) << t;
  EXPECT_EQ(t.find('\xff'), std::string::npos) << t;
  EXPECT_NE(t.find("EngineCore\\xff"), std::string::npos) << t;
  EXPECT_NE(t.find("evil\\x1b[2J\\x09col\\x0arow"), std::string::npos) << t;
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 3) << "a header and two rows:\n" << t;
  // Columns line up: the TGID column starts at the same offset on every line.
  std::istringstream lines(t);
  std::string header, row1, row2;
  std::getline(lines, header), std::getline(lines, row1), std::getline(lines, row2);
  auto col_of = [](const std::string& l, const std::string& what) {
    size_t bytes = l.find(what), cols = 0;
    for (size_t i = 0; i < bytes; ++i) cols += (static_cast<unsigned char>(l[i]) & 0xc0) != 0x80;
    return cols;
  };
  EXPECT_EQ(col_of(header, "TITLE"), col_of(row1, "evil"));
  EXPECT_EQ(col_of(header, "TITLE"), col_of(row2, "-"));  // "décode" is 6 columns, 7 bytes
}

TEST(CliOutput, ExplainAndPreviewEscapeNames) {
  pb::ExplainResponse e;
  e.set_found(true);
  auto* l = e.mutable_lineage();
  l->set_tid(9);
  l->set_comm("\x1b]0;pwned\x07");
  l->set_title("t\xff");
  l->set_cgroup("/a\nb");
  const std::string x = render_explain(9, api::plain(e));
  EXPECT_NE(x.find("comm '\\x1b]0;pwned\\x07'"), std::string::npos) << x;
  EXPECT_NE(x.find("title:    t\\xff"), std::string::npos) << x;
  EXPECT_NE(x.find("cgroup:   /a\\x0ab"), std::string::npos) << x;
  pb::PreviewResponse p;
  auto* m = p.add_matched();
  m->set_tid(9);
  m->set_comm("\x1b[31mred");
  p.add_warnings("e.g. 'x\x1b[2J'");
  const std::string y = render_preview(api::plain(p));
  EXPECT_EQ(y.find('\x1b'), std::string::npos) << y;
  EXPECT_NE(y.find("\\x1b[31mred"), std::string::npos) << y;
}

}  // namespace
}  // namespace c2c::cli
