// `claim2core get` output formats and `get -w` from listings, without a daemon: -o wide shows the
// wide-only columns, -o name one "<kind>/<name>" a line, -o json|yaml one kubectl-style List for
// every resource, and a watch prints added, modified and deleted rows.
#include <gtest/gtest.h>

#include "cli/listing.hpp"
#include "api/replies_proto.hpp"
#include "cli/decision_tables.hpp"
#include "cli/tables.hpp"
#include "codec/yaml_json.hpp"

namespace c2c::cli {
namespace {

namespace pb = ::claim2core::v1;

// The replies as the client library hands them over: the wire message through api::plain.
reply::Policies policies_of(const pb::ListPoliciesResponse& r) {
  auto p = api::plain(r);
  EXPECT_TRUE(p.ok()) << p.error.field << ": " << p.error.message;
  return p.value.value_or(reply::Policies{});
}

using nlohmann::json;

pb::ListIntentsResponse two_intents() {
  pb::ListIntentsResponse r;
  auto* i = r.add_intents();
  i->set_kind(pb::NODE_SCHEDULING_POLICY);
  i->set_policy("vllm-enginecore");
  i->set_policy_generation(1);
  i->set_state(pb::APPLIED);
  i->set_updated_unix_ms(1764547200000);  // 2025-12-01T00:00:00Z
  i->add_warnings("commandRegex matches 40 threads");
  auto* d = r.add_intents();
  d->set_kind(pb::DRA_EXECUTION_POLICY);
  d->set_policy("llm-decode");
  d->set_state(pb::PENDING);
  return r;
}

pb::ListTasksResponse one_task() {
  pb::ListTasksResponse r;
  auto* t = r.add_tasks();
  t->set_tid(4242);
  t->set_tgid(4200);
  t->set_comm("EngineCore_DP0");
  t->set_pod_uid("uid-1");
  return r;
}

pb::ListBindingsResponse one_binding() {
  pb::ListBindingsResponse r;
  auto* b = r.add_bindings();
  b->set_claim_uid("claim-1");
  b->set_pod_uid("uid-1");
  b->set_device("gpu-0");
  auto* p = r.add_pods();
  p->set_uid("uid-1");
  p->set_namespace_("inference");
  p->set_name("vllm-0");
  return r;
}

pb::ListPoliciesResponse one_policy() {
  pb::ListPoliciesResponse r;
  auto* d = r.add_policies()->mutable_dra();
  d->set_name("llm-decode");
  d->set_generation(3);
  d->add_resource_claims("gpu");
  d->set_prefer_same_numa(true);
  d->set_max_boost_duration("30s");
  auto* role = d->add_task_roles();
  role->set_name("decode");
  role->set_registered_role("decode");
  role->set_execution_class("latency-critical");
  return r;
}

TEST(CliListing, WideShowsTheWideColumnsAndTheTableDoesNot) {
  Listing l = intents_listing(api::plain(two_intents()));
  std::string table = render_listing(l, GetFormat::Table), wide = render_listing(l, GetFormat::Wide);
  EXPECT_EQ(table.find("UPDATED"), std::string::npos) << table;
  EXPECT_NE(wide.find("REASON"), std::string::npos) << wide;
  EXPECT_NE(wide.find("UPDATED"), std::string::npos) << wide;
  EXPECT_NE(wide.find("2025-12-01T00:00:00Z"), std::string::npos) << wide;
  EXPECT_NE(wide.find("commandRegex matches 40 threads"), std::string::npos) << wide;
  EXPECT_EQ(table, render_intents(api::plain(two_intents())));  // the default table is the listing's

  std::string pw = render_listing(policies_listing(policies_of(one_policy())), GetFormat::Wide);
  EXPECT_NE(pw.find("preferSameNuma,maxBoost 30s"), std::string::npos) << pw;
  EXPECT_EQ(render_listing(policies_listing(policies_of(one_policy())), GetFormat::Table).find("OPTIONS"), std::string::npos);

  std::string bw = render_listing(bindings_listing(api::plain(one_binding())), GetFormat::Wide);
  EXPECT_NE(bw.find("inference/vllm-0"), std::string::npos) << bw;
  auto pods = api::plain(one_binding()).pods;
  std::string tw = render_listing(tasks_listing(api::plain(one_task()), pods), GetFormat::Wide);
  EXPECT_NE(tw.find("POD NAME"), std::string::npos) << tw;
  EXPECT_NE(tw.find("inference/vllm-0"), std::string::npos) << tw;
}

TEST(CliListing, NamePrintsKindSlashNameOneALine) {
  EXPECT_EQ(render_listing(intents_listing(api::plain(two_intents())), GetFormat::Name),
            "intent/NodeSchedulingPolicy/vllm-enginecore\nintent/DRAExecutionPolicy/llm-decode\n");
  EXPECT_EQ(render_listing(policies_listing(policies_of(one_policy())), GetFormat::Name), "DRAExecutionPolicy/llm-decode\n");
  EXPECT_EQ(render_listing(tasks_listing(api::plain(one_task())), GetFormat::Name), "task/4242\n");
  EXPECT_EQ(render_listing(bindings_listing(api::plain(one_binding())), GetFormat::Name), "binding/claim-1/gpu-0\n");
  EXPECT_EQ(render_listing(intents_listing(std::vector<reply::Intent>{}), GetFormat::Name), "");
}

TEST(CliListing, JsonAndYamlAreOneListForEveryResource) {
  std::vector<Listing> all = {policies_listing(policies_of(one_policy())), intents_listing(api::plain(two_intents())),
                              tasks_listing(api::plain(one_task())), bindings_listing(api::plain(one_binding())), intents_listing(std::vector<reply::Intent>{})};
  for (const auto& l : all) {
    json j = json::parse(render_listing(l, GetFormat::Json));
    EXPECT_EQ(j["apiVersion"], "v1");
    EXPECT_EQ(j["kind"], "List");
    ASSERT_TRUE(j["items"].is_array());
    EXPECT_EQ(j["items"].size(), l.rows.size());
    auto docs = codec::yaml_to_json(render_listing(l, GetFormat::Yaml));
    ASSERT_EQ(docs.size(), 1u);
    EXPECT_EQ(docs[0], j) << render_listing(l, GetFormat::Yaml);
  }
  json intents = json::parse(render_listing(all[1], GetFormat::Json));
  EXPECT_EQ(intents["items"][0]["policy"], "vllm-enginecore");
  EXPECT_EQ(intents["items"][0]["state"], "APPLIED");
  json policies = json::parse(render_listing(all[0], GetFormat::Json));
  EXPECT_EQ(policies["items"][0]["kind"], "DRAExecutionPolicy");  // a manifest, apply -f reads it
  EXPECT_EQ(policies["items"][0]["metadata"]["name"], "llm-decode");
  json bindings = json::parse(render_listing(all[3], GetFormat::Json));
  EXPECT_EQ(bindings["items"][0]["pod"]["name"], "vllm-0");  // the binding's pod travels with it
}

// `get decisions` and explain's controller lines (issue 46), from the wire replies as the client
// library converts them.
pb::ControllerDecision one_raise() {
  pb::ControllerDecision d;
  d.set_time_unix_ms(1796647227000);
  d.set_core_time_ns(17269124799401);
  d.set_policy_kind(pb::NODE_SCHEDULING_POLICY);
  d.set_policy("ctl");
  d.set_from_level(0);
  d.set_to_level(1);
  d.set_has_signal(true);
  d.set_run_delay_p99_ns(4'000'000);
  d.set_cpu_share_mean(0.25);
  d.set_cpu_share_max(0.5);
  d.set_threads_ran(2);
  for (uint32_t t : {10u, 11u}) d.add_tids(t);
  d.set_rule("raise");
  d.set_reason("level 0 -> 1: runDelayP99 4ms > target 2ms");
  d.set_has_cpu_pressure(true);
  d.set_cpu_pressure_some_pct(37.5);
  d.set_pressure_cgroup("/sys/fs/cgroup/unified/w");
  return d;
}

TEST(CliListing, DecisionsAreOneRowEachWithTheirSignalAndTheExplainLines) {
  pb::ListDecisionsResponse r;
  *r.add_decisions() = one_raise();
  auto* hold = r.add_decisions();
  *hold = one_raise();
  hold->set_core_time_ns(17269624869432);
  hold->set_from_level(1);
  hold->set_has_signal(false);
  hold->set_run_delay_p99_ns(0);
  hold->set_rule("silent");
  hold->set_no_signal("no measured thread ran in the window");
  hold->set_has_cpu_pressure(false);
  hold->set_cpu_pressure_some_pct(0);
  hold->clear_tids();
  for (uint32_t t = 1; t <= 9; ++t) hold->add_tids(t);
  const Listing l = decisions_listing(api::plain(r));
  const std::string table = render_listing(l, GetFormat::Table), wide = render_listing(l, GetFormat::Wide);
  EXPECT_NE(table.find("RUN DELAY P99"), std::string::npos) << table;
  EXPECT_EQ(table.find("NO SIGNAL"), std::string::npos) << table;
  EXPECT_NE(table.find("2026-12-07T12:40:27Z"), std::string::npos) << table;
  EXPECT_NE(table.find("NodeSchedulingPolicy/ctl"), std::string::npos) << table;
  EXPECT_NE(table.find("10,11"), std::string::npos) << table;
  EXPECT_NE(table.find("0 -> 1"), std::string::npos) << table;
  EXPECT_NE(table.find("4ms"), std::string::npos) << table;
  EXPECT_NE(table.find("0.25/0.50"), std::string::npos) << table;
  EXPECT_NE(table.find("CPU PRESSURE"), std::string::npos) << table;
  EXPECT_NE(table.find("37.5%"), std::string::npos) << "the window's PSI: " << table;
  EXPECT_EQ(table.find("0.0%"), std::string::npos) << "a window without pressure read shows none, never 0 %: " << table;
  EXPECT_NE(wide.find("/sys/fs/cgroup/unified/w"), std::string::npos) << wide;
  EXPECT_NE(table.find("1,2,3,4,5,6,7,8,... (9)"), std::string::npos) << "a long TIDS cell is cut: " << table;
  EXPECT_NE(wide.find("no measured thread ran in the window"), std::string::npos) << wide;
  EXPECT_EQ(render_listing(l, GetFormat::Name),
            "decision/NodeSchedulingPolicy/ctl/17269124799401\ndecision/NodeSchedulingPolicy/ctl/17269624869432\n");
  json j = json::parse(render_listing(l, GetFormat::Json));
  ASSERT_EQ(j["items"].size(), 2u);
  EXPECT_EQ(j["items"][0]["rule"], "raise");
  EXPECT_EQ(j["items"][0]["tids"], json({10, 11}));
  EXPECT_EQ(render_listing(decisions_listing(reply::Decisions{}), GetFormat::Table), "No controller decisions.\n");

  pb::ExplainResponse e;
  e.set_found(true);
  EXPECT_EQ(explain_controller_lines(api::plain(e)), "") << "no controller acts on the thread";
  e.mutable_controller()->set_policy_kind(pb::NODE_SCHEDULING_POLICY);
  e.mutable_controller()->set_policy("ctl");
  e.mutable_controller()->set_level(1);
  e.mutable_controller()->set_max_level(3);
  *e.add_decisions() = one_raise();
  EXPECT_EQ(explain_controller_lines(api::plain(e)),
            "  controller: level 1 of 3 (raised)\n"
            "  decision: 2026-12-07T12:40:27Z level 0 -> 1 raise (run delay p99 4ms, cpu share 0.25/0.50, "
            "cpu pressure 37.5%): level 0 -> 1: runDelayP99 4ms > target 2ms\n");
}

TEST(CliListing, ExplainAndPreviewShowTheRoleProposedFromActivity) {
  pb::RoleProposal p;
  p.set_tid(302);
  p.set_role("critical-path");
  p.set_confidence_permille(930);
  p.set_outcome("proposed");
  p.set_text("proposed: critical-path (latency-critical), confidence 0.93: tid 302 wakes tid 301 on 93 of its 100 "
             "wakeups (93 %): critical path [NodeSchedulingPolicy/busy, classify: propose]");
  pb::ExplainResponse e;
  EXPECT_EQ(explain_proposal_lines(api::plain(e)), "") << "no proposal";
  *e.add_proposals() = p;
  EXPECT_EQ(explain_proposal_lines(api::plain(e)), "  proposed role: " + p.text() + "\n");
  // A thread without an entry (its process's policy proposes it) is still explained.
  EXPECT_EQ(render_explain(302, api::plain(e)),
            "tid 302: no policy entry (no live lineage)\n  proposed role: " + p.text() + "\n");
  pb::PreviewResponse r;
  r.set_policy("NodeSchedulingPolicy/busy");
  *r.add_proposals() = p;
  EXPECT_NE(render_preview(api::plain(r)).find("proposed role: tid 302 " + p.text() + "\n"), std::string::npos)
      << render_preview(api::plain(r));
}

TEST(CliListing, DiffFindsAddedModifiedAndDeletedRowsByName) {
  pb::ListIntentsResponse before = two_intents();
  pb::ListIntentsResponse after = two_intents();
  after.mutable_intents(1)->set_state(pb::APPLIED);          // llm-decode: modified
  after.mutable_intents()->DeleteSubrange(0, 1);             // vllm-enginecore: deleted
  auto* n = after.add_intents();                             // a new one: added
  n->set_kind(pb::NODE_SCHEDULING_POLICY);
  n->set_policy("bench");
  auto changes = diff_listings(intents_listing(api::plain(before)), intents_listing(api::plain(after)));
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].type, ChangeType::Modified);
  EXPECT_EQ(changes[0].row.name, "intent/DRAExecutionPolicy/llm-decode");
  EXPECT_EQ(changes[1].type, ChangeType::Added);
  EXPECT_EQ(changes[1].row.name, "intent/NodeSchedulingPolicy/bench");
  EXPECT_EQ(changes[2].type, ChangeType::Deleted);
  EXPECT_EQ(changes[2].row.name, "intent/NodeSchedulingPolicy/vllm-enginecore");
  EXPECT_TRUE(diff_listings(intents_listing(api::plain(after)), intents_listing(api::plain(after))).empty());
}

TEST(CliListing, WatchPrintsTheHeaderOnceThenAlignedRowsWithTheirEvent) {
  WatchPrinter p(GetFormat::Table);
  Listing empty = intents_listing(std::vector<reply::Intent>{});
  EXPECT_EQ(p.print(empty, {}), "EVENT  KIND  POLICY  GENERATION  NODE  STATE  TASKS  ENTRIES  REASON\n");
  Listing now = intents_listing(api::plain(two_intents()));
  std::string out = p.print(now, diff_listings(empty, now));
  EXPECT_EQ(out.find("EVENT"), std::string::npos) << out;
  EXPECT_EQ(out.rfind("ADDED  NodeSchedulingPolicy  vllm-enginecore", 0), 0u) << out;
  EXPECT_NE(out.find("\nADDED  DRAExecutionPolicy    llm-decode"), std::string::npos) << out;
  EXPECT_EQ(p.print(now, {}), "");  // nothing changed, nothing printed

  WatchPrinter j(GetFormat::Json);
  std::string lines = j.print(now, diff_listings(now, intents_listing(std::vector<reply::Intent>{})));
  auto first = json::parse(lines.substr(0, lines.find('\n')));
  EXPECT_EQ(first["type"], "DELETED");
  EXPECT_EQ(first["object"]["policy"], "vllm-enginecore");
  WatchPrinter names(GetFormat::Name);
  EXPECT_EQ(names.print(now, diff_listings(empty, now)),
            "intent/NodeSchedulingPolicy/vllm-enginecore\nintent/DRAExecutionPolicy/llm-decode\n");
}

TEST(CliListing, FormatNamesAreCheckedNamingTheChoices) {
  EXPECT_EQ(get_format_from_string("wide"), GetFormat::Wide);
  EXPECT_EQ(get_format_from_string("name"), GetFormat::Name);
  EXPECT_THROW(get_format_from_string("xml"), std::invalid_argument);
}

}  // namespace
}  // namespace c2c::cli
