// property.role_proposals (issue 46 item 4): the roles proposed from activity, CLS-1..CLS-3 of
// spec/state-machine.md §11, on random activity windows aimed at the rules' thresholds, against the
// naive model (naive_role_proposals.hpp). Self-contained (role_proposals.cpp and this file):
// tests/mutants/mutate.py classify builds it with each seeded bug of tests/mutants/role_proposals.tsv.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "core/role_proposals.hpp"
#include "naive_role_proposals.hpp"

namespace c2c::property {
namespace {

constexpr uint64_t kMax = UINT64_MAX;

// Counts near the rules' thresholds, and the extremes.
rc::Gen<uint64_t> gen_count() {
  return rc::gen::oneOf(rc::gen::inRange<uint64_t>(0, 12), rc::gen::element<uint64_t>(15, 16, 17, 31, 32, 33, 64, 1000),
                        rc::gen::element<uint64_t>(kMax / 1000, kMax / 1000 + 1, kMax / 2, kMax - 1, kMax));
}

rc::Gen<uint64_t> gen_window_ns() {
  return rc::gen::element<uint64_t>(0, 1, 10'000'000, 999'999'999, 1'000'000'000, 1'000'000'001, 5'000'000'000, kMax);
}

rc::Gen<ActivityWindow> gen_window() {
  return rc::gen::exec([] {
    ActivityWindow w;
    w.window_ns = *gen_window_ns();
    const auto ntids = *rc::gen::inRange<uint32_t>(1, 7);
    const auto nthreads = *rc::gen::inRange<size_t>(0, 8);
    for (size_t i = 0; i < nthreads; ++i) {
      ThreadActivity t;
      t.tid = *rc::gen::inRange<uint32_t>(1, ntids + 1);  // a duplicate tid now and then
      t.tgid = 1;
      // run time around the busy threshold of the window (80 %), or anything
      t.run_ns = *rc::gen::oneOf(
          rc::gen::just(w.window_ns / 1000 * 800), rc::gen::just(w.window_ns / 1000 * 800 - (w.window_ns >= 1000 ? 1 : 0)),
          rc::gen::just(w.window_ns), rc::gen::just(w.window_ns / 2), gen_count());
      t.runs = *gen_count();
      t.wakeups = *gen_count();
      t.wakes_given = *rc::gen::oneOf(rc::gen::just<uint64_t>(0), gen_count());
      w.threads.push_back(t);
    }
    const auto nedges = *rc::gen::inRange<size_t>(0, 10);
    for (size_t i = 0; i < nedges; ++i) {
      WakeEdge e;
      e.waker = *rc::gen::inRange<uint32_t>(1, ntids + 2);  // now and then a waker that is no thread of the window
      e.wakee = *rc::gen::inRange<uint32_t>(1, ntids + 1);
      e.count = *gen_count();
      // Half of a wakee's wakeups, exactly, now and then (the share threshold).
      for (const auto& t : w.threads)
        if (t.tid == e.wakee && *rc::gen::arbitrary<bool>()) e.count = t.wakeups / 2 + *rc::gen::inRange<uint64_t>(0, 2);
      w.edges.push_back(e);
    }
    return w;
  });
}

std::string show(const std::vector<RoleProposal>& ps) {
  std::string s;
  for (const auto& p : ps) s += describe(p) + " [tid " + std::to_string(p.tid) + "]\n";
  return s;
}

// CLS-1: bounded, explained, one per thread of the window, sorted, independent of the input's
// order, and what the naive model proposes.
RC_GTEST_PROP(RoleProposals, Cls1_BoundedExplainedDeterministicAndAsTheNaiveModelSays, ()) {
  const ActivityWindow w = *gen_window();
  const auto ps = propose_roles(w);
  bool critical = false, background = false;
  for (const auto& p : ps) (p.role == ProposedRole::CriticalPath ? critical : background) = true;
  RC_CLASSIFY(critical, "a critical-path proposal");
  RC_CLASSIFY(background, "a background-like proposal");
  RC_CLASSIFY(ps.empty(), "no proposal");
  std::set<uint32_t> tids;
  for (const auto& t : w.threads) tids.insert(t.tid);
  uint32_t last = 0;
  for (const auto& p : ps) {
    RC_ASSERT(p.confidence_permille <= 1000u);
    RC_ASSERT(tids.count(p.tid) == 1u);
    RC_ASSERT(p.tid > last);  // sorted, one per thread
    last = p.tid;
    RC_ASSERT(p.reason.find("tid " + std::to_string(p.tid)) != std::string::npos);
    RC_ASSERT(describe(p).find("confidence ") != std::string::npos);
  }
  // Any order of the same window gives the same proposals.
  ActivityWindow shuffled = w;
  std::reverse(shuffled.edges.begin(), shuffled.edges.end());
  // The first record of a duplicate tid is the one that counts: keep duplicates' relative order.
  std::stable_sort(shuffled.threads.begin(), shuffled.threads.end(),
                   [](const auto& a, const auto& b) { return a.tid > b.tid; });
  RC_ASSERT(propose_roles(shuffled) == ps);
  const auto naive = naive_propose_roles(w);
  RC_LOG() << show(ps);
  RC_ASSERT(naive.size() == ps.size());
  for (size_t i = 0; i < ps.size(); ++i) {
    RC_ASSERT(ps[i].tid == naive[i].tid);
    RC_ASSERT(ps[i].role == naive[i].role);
    RC_ASSERT(ps[i].confidence_permille == naive[i].confidence_permille);
    RC_ASSERT(ps[i].counterpart == naive[i].counterpart);
  }
}

// CLS-2: a registered role or an explicit selector always wins over a proposal; off proposes nothing.
RC_GTEST_PROP(RoleProposals, Cls2_ARegisteredRoleOrASelectorAlwaysWins, ()) {
  const auto mode = *rc::gen::element(ClassifyMode::Propose, ClassifyMode::Apply, ClassifyMode::Off);
  const bool registered = *rc::gen::arbitrary<bool>(), selector = *rc::gen::arbitrary<bool>();
  const auto o = proposal_outcome(mode, {registered, selector});
  RC_ASSERT(o == naive_outcome(mode, registered, selector));
  if (registered || selector) RC_ASSERT(o != ProposalOutcome::Applied && o != ProposalOutcome::Shown);
  if (o == ProposalOutcome::Applied) RC_ASSERT(mode == ClassifyMode::Apply);
}

// CLS-3: a proposal acts only under apply and only within the controller: the controller's threads
// are its members plus the applied critical-path proposals, never fewer members, never more.
RC_GTEST_PROP(RoleProposals, Cls3_AppliedOnlyUnderApplyAndWithinTheController, ()) {
  const ActivityWindow w = *gen_window();
  const auto ps = propose_roles(w);
  const auto mode = *rc::gen::element(ClassifyMode::Propose, ClassifyMode::Apply, ClassifyMode::Off);
  std::vector<uint32_t> members = *rc::gen::container<std::vector<uint32_t>>(rc::gen::inRange<uint32_t>(1, 8));
  std::vector<ProposalOutcome> outcomes;
  std::set<uint32_t> expected(members.begin(), members.end());
  for (const auto& p : ps) {
    const bool member = std::find(members.begin(), members.end(), p.tid) != members.end();
    // A member is matched by the policy's selector: it wins (CLS-2).
    outcomes.push_back(proposal_outcome(mode, {*rc::gen::arbitrary<bool>(), member}));
    if (naive_outcome(mode, false, member) == ProposalOutcome::Applied && outcomes.back() == ProposalOutcome::Applied &&
        p.role == ProposedRole::CriticalPath)
      expected.insert(p.tid);
  }
  const auto got = controller_members(members, ps, outcomes);
  RC_ASSERT(got == std::vector<uint32_t>(expected.begin(), expected.end()));
  if (mode != ClassifyMode::Apply) RC_ASSERT(std::set<uint32_t>(got.begin(), got.end()) ==
                                             std::set<uint32_t>(members.begin(), members.end()));
}

// CLS-3's validation: apply needs spec.controller, named by the field.
TEST(RoleProposals, Cls3_ApplyWithoutAControllerIsRefusedNamingTheField) {
  NodeSchedulingPolicy n;
  n.name = "busy";
  n.generation = 1;
  n.node_names = {"node-a"};
  n.command_regex = "^x$";
  n.classify = ClassifyMode::Apply;
  auto e = validate(n);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->field, "classify");
  n.classify = ClassifyMode::Propose;
  EXPECT_FALSE(validate(n).has_value());
  n.classify = ClassifyMode::Off;
  EXPECT_FALSE(validate(n).has_value());
  n.classify = static_cast<ClassifyMode>(7);
  ASSERT_TRUE(validate(n).has_value());
  EXPECT_EQ(validate(n)->field, "classify");
}

// The issue's two examples, with their reasons.
TEST(RoleProposals, TheIssuesExamples) {
  ActivityWindow w;
  w.window_ns = 1'000'000'000;
  // 7 wakes the busy loop 8 on 42 of its 45 wakeups; 9 spins and wakes nobody.
  w.threads = {{7, 1, 10'000'000, 45, 3, 42}, {8, 1, 400'000'000, 46, 45, 0}, {9, 1, 990'000'000, 12, 0, 0}};
  w.edges = {{7, 8, 42}};
  const auto ps = propose_roles(w);
  ASSERT_EQ(ps.size(), 3u) << show(ps);
  EXPECT_EQ(ps[0].role, ProposedRole::CriticalPath);
  EXPECT_EQ(ps[0].confidence_permille, 933u);
  EXPECT_EQ(describe(ps[0]),
            "critical-path (latency-critical), confidence 0.93: tid 7 wakes tid 8 on 42 of its 45 wakeups (93 %): "
            "critical path");
  EXPECT_EQ(ps[1].role, ProposedRole::CriticalPath);
  EXPECT_EQ(ps[1].counterpart, 7u);
  EXPECT_EQ(ps[2].role, ProposedRole::BackgroundLike);
  EXPECT_EQ(describe(ps[2]),
            "background-like (background), confidence 0.99: tid 9 runs 99 % of the 1.00 s window and wakes nobody: "
            "background-like");
}

}  // namespace
}  // namespace c2c::property
