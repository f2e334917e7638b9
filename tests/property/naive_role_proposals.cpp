#include "naive_role_proposals.hpp"

#include <algorithm>

namespace c2c::property {

namespace {

__extension__ using u128 = unsigned __int128;

// floor(1000 * num / den), at most 1000; 0 when den is 0 (the spec's "share in per mille").
uint32_t pm(u128 num, u128 den) {
  if (den == 0) return 0;
  const u128 v = num * 1000 / den;
  return v > 1000 ? 1000u : static_cast<uint32_t>(v);
}

}  // namespace

std::vector<NaiveProposal> naive_propose_roles(const ActivityWindow& w) {
  // The window's threads (the first record of a tid) and its edges (duplicates summed, capped at
  // the largest u64; self-edges and zero counts are no edges).
  std::vector<ThreadActivity> threads;
  for (const auto& t : w.threads) {
    bool seen = false;
    for (const auto& u : threads) seen = seen || u.tid == t.tid;
    if (!seen) threads.push_back(t);
  }
  struct E { uint32_t a, b; u128 n; };
  std::vector<E> edges;
  for (const auto& e : w.edges) {
    if (e.count == 0 || e.waker == e.wakee) continue;
    bool merged = false;
    for (auto& x : edges)
      if (x.a == e.waker && x.b == e.wakee) {
        x.n += e.count;
        merged = true;
      }
    if (!merged) edges.push_back({e.waker, e.wakee, e.count});
  }
  for (auto& x : edges) x.n = std::min<u128>(x.n, UINT64_MAX);
  auto find = [&](uint32_t tid) -> const ThreadActivity* {
    for (const auto& t : threads)
      if (t.tid == tid) return &t;
    return nullptr;
  };
  std::vector<NaiveProposal> out;
  for (const auto& t : threads) {
    std::vector<NaiveProposal> cands;
    for (const auto& e : edges) {
      if (e.a != t.tid && e.b != t.tid) continue;
      const ThreadActivity* wakee = find(e.b);
      if (wakee == nullptr || find(e.a) == nullptr) continue;
      const u128 wakeups = std::max<u128>(wakee->wakeups, e.n);
      if (wakeups < kStepMinWakeups) continue;
      const uint32_t share = pm(e.n, wakeups);
      if (share < kStepSharePermille) continue;
      const uint32_t evidence = pm(wakeups, kStepFullEvidence);
      cands.push_back({t.tid, ProposedRole::CriticalPath, share * evidence / 1000, e.a == t.tid ? e.b : e.a});
    }
    bool wakes = t.wakes_given != 0;
    for (const auto& e : edges) wakes = wakes || e.a == t.tid;
    if (!wakes && w.window_ns > 0) {
      const uint32_t share = pm(t.run_ns, w.window_ns);
      if (share >= kBusySharePermille)
        cands.push_back({t.tid, ProposedRole::BackgroundLike, share * pm(w.window_ns, kBusyFullEvidenceNs) / 1000, 0});
    }
    if (cands.empty()) continue;
    // Highest confidence; then critical path; then the lowest counterpart.
    NaiveProposal best = cands[0];
    for (const auto& c : cands) {
      const bool better = c.confidence_permille > best.confidence_permille ||
                          (c.confidence_permille == best.confidence_permille &&
                           ((c.role == ProposedRole::CriticalPath && best.role != ProposedRole::CriticalPath) ||
                            (c.role == best.role && c.counterpart < best.counterpart)));
      if (better) best = c;
    }
    out.push_back(best);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.tid < b.tid; });
  return out;
}

ProposalOutcome naive_outcome(ClassifyMode mode, bool registered_role, bool explicit_selector) {
  // The spec's table, row by row.
  if (mode == ClassifyMode::Off) return ProposalOutcome::Off;
  if (registered_role) return ProposalOutcome::OutrankedByRegisteredRole;
  if (explicit_selector) return ProposalOutcome::OutrankedBySelector;
  if (mode == ClassifyMode::Apply) return ProposalOutcome::Applied;
  return ProposalOutcome::Shown;
}

}  // namespace c2c::property
