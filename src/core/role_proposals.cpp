#include "core/role_proposals.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "core/model.hpp"

namespace c2c {

const char* to_string(ClassifyMode m) {
  switch (m) {
    case ClassifyMode::Propose: return "propose";
    case ClassifyMode::Apply: return "apply";
    case ClassifyMode::Off: return "off";
  }
  return "?";
}

std::optional<ClassifyMode> classify_mode_from_string(const std::string& s) {
  if (s == "propose") return ClassifyMode::Propose;
  if (s == "apply") return ClassifyMode::Apply;
  if (s == "off") return ClassifyMode::Off;
  return std::nullopt;
}

const char* to_string(ProposedRole r) {
  switch (r) {
    case ProposedRole::CriticalPath: return "critical-path";
    case ProposedRole::BackgroundLike: return "background-like";
  }
  return "?";
}

ExecClass proposed_class(ProposedRole r) {
  return r == ProposedRole::CriticalPath ? ExecClass::LatencyCritical : ExecClass::Background;
}

const char* to_string(ProposalOutcome o) {
  switch (o) {
    case ProposalOutcome::Off: return "off";
    case ProposalOutcome::OutrankedByRegisteredRole: return "outranked by the registered role";
    case ProposalOutcome::OutrankedBySelector: return "outranked by the policy's selector";
    case ProposalOutcome::Applied: return "applied";
    case ProposalOutcome::Shown: return "proposed";
  }
  return "?";
}

uint32_t permille(uint64_t num, uint64_t den) {
  if (den == 0) return 0;
  if (num >= den) return 1000;
  __extension__ using u128 = unsigned __int128;  // num * 1000 needs up to 74 bits: the floor stays exact
  return static_cast<uint32_t>(static_cast<u128>(num) * 1000 / den);
}

namespace {

// 0.93 from 930 per mille (two decimals, floor: a confidence is never printed higher than it is)
std::string fraction(uint32_t pm) {
  const uint32_t hundredths = pm / 10;
  return std::to_string(hundredths / 100) + (hundredths % 100 < 10 ? ".0" : ".") + std::to_string(hundredths % 100);
}

std::string percent(uint32_t pm) { return std::to_string(pm / 10) + " %"; }

std::string seconds(uint64_t ns) {
  const uint64_t hundredths = ns / 10'000'000;
  return std::to_string(hundredths / 100) + (hundredths % 100 < 10 ? ".0" : ".") + std::to_string(hundredths % 100) + " s";
}

// Better candidate for one thread: higher confidence, then critical path, then lower counterpart.
bool better(const RoleProposal& a, const RoleProposal& b) {
  if (a.confidence_permille != b.confidence_permille) return a.confidence_permille > b.confidence_permille;
  if (a.role != b.role) return a.role == ProposedRole::CriticalPath;
  return a.counterpart < b.counterpart;
}

}  // namespace

std::vector<RoleProposal> propose_roles(const ActivityWindow& w) {
  std::map<uint32_t, const ThreadActivity*> threads;
  for (const auto& t : w.threads) threads.emplace(t.tid, &t);  // the first of a duplicate tid
  std::map<uint32_t, RoleProposal> best;
  auto offer = [&](RoleProposal p) {
    auto it = best.find(p.tid);
    if (it == best.end()) best.emplace(p.tid, std::move(p));
    else if (better(p, it->second)) it->second = std::move(p);
  };
  // Merge duplicate edges (a window is one edge per pair, but the order and duplicates of an
  // input must not change the result).
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> edges;
  for (const auto& e : w.edges) {
    if (e.count == 0 || e.waker == e.wakee) continue;
    auto& n = edges[{e.waker, e.wakee}];
    n = (n > std::numeric_limits<uint64_t>::max() - e.count) ? std::numeric_limits<uint64_t>::max() : n + e.count;
  }
  std::set<uint32_t> wakers;
  for (const auto& [k, count] : edges) {
    wakers.insert(k.first);
    auto wakee = threads.find(k.second);
    if (wakee == threads.end() || threads.find(k.first) == threads.end()) continue;
    const uint64_t wakeups = std::max(wakee->second->wakeups, count);
    if (wakeups < kStepMinWakeups) continue;
    const uint32_t share = permille(count, wakeups);
    if (share < kStepSharePermille) continue;
    const uint32_t conf = share * permille(wakeups, kStepFullEvidence) / 1000;
    const std::string figures = std::to_string(count) + " of its " + std::to_string(wakeups) + " wakeups (" +
                                percent(share) + ")";
    offer({k.first, ProposedRole::CriticalPath, conf, k.second,
           "tid " + std::to_string(k.first) + " wakes tid " + std::to_string(k.second) + " on " + figures +
               ": critical path"});
    offer({k.second, ProposedRole::CriticalPath, conf, k.first,
           "tid " + std::to_string(k.second) + " is woken by tid " + std::to_string(k.first) + " on " + figures +
               ": critical path"});
  }
  if (w.window_ns > 0) {
    for (const auto& [tid, t] : threads) {
      if (t->wakes_given != 0 || wakers.count(tid)) continue;
      const uint32_t share = permille(t->run_ns, w.window_ns);
      if (share < kBusySharePermille) continue;
      const uint32_t conf = share * permille(w.window_ns, kBusyFullEvidenceNs) / 1000;
      offer({tid, ProposedRole::BackgroundLike, conf, 0,
             "tid " + std::to_string(tid) + " runs " + percent(share) + " of the " + seconds(w.window_ns) +
                 " window and wakes nobody: background-like"});
    }
  }
  std::vector<RoleProposal> out;
  out.reserve(best.size());
  for (auto& [tid, p] : best) out.push_back(std::move(p));
  return out;
}

ProposalOutcome proposal_outcome(ClassifyMode mode, const ThreadRoleFacts& facts) {
  if (mode == ClassifyMode::Off) return ProposalOutcome::Off;
  if (facts.registered_role) return ProposalOutcome::OutrankedByRegisteredRole;
  if (facts.explicit_selector) return ProposalOutcome::OutrankedBySelector;
  return mode == ClassifyMode::Apply ? ProposalOutcome::Applied : ProposalOutcome::Shown;
}

std::vector<uint32_t> controller_members(std::vector<uint32_t> members, const std::vector<RoleProposal>& proposals,
                                         const std::vector<ProposalOutcome>& outcomes) {
  for (size_t i = 0; i < proposals.size() && i < outcomes.size(); ++i)
    if (outcomes[i] == ProposalOutcome::Applied && proposals[i].role == ProposedRole::CriticalPath)
      members.push_back(proposals[i].tid);
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  return members;
}

std::string describe(const RoleProposal& p) {
  return std::string(to_string(p.role)) + " (" + to_string(proposed_class(p.role)) + "), confidence " +
         fraction(p.confidence_permille) + ": " + p.reason;
}

}  // namespace c2c
