#include "daemon/node_state/intent_reasons.hpp"

#include <utility>

namespace c2c::daemon {
namespace {

constexpr size_t kTidsShown = 8;  // a reason is read by people: the rest is counted

std::string tid_list(const std::vector<uint32_t>& tids) {
  std::string out = tids.size() == 1 ? "tid " : "tids ";
  for (size_t i = 0; i < tids.size() && i < kTidsShown; ++i) out += (i ? ", " : "") + std::to_string(tids[i]);
  if (tids.size() > kTidsShown) out += " and " + std::to_string(tids.size() - kTidsShown) + " more";
  return out;
}

}  // namespace

std::map<std::string, std::string> lost_conflicts(const std::vector<Conflict>& conflicts) {
  // loser -> (winner, rule) -> tids, in tid order (conflicts come sorted by tid).
  std::map<std::string, std::map<std::pair<std::string, std::string>, std::vector<uint32_t>>> by_loser;
  for (const auto& c : conflicts)
    for (size_t i = 0; i < c.losers.size(); ++i)
      // The rule decided the winner against the runner-up; a loser further down lost by it or an earlier one.
      by_loser[c.losers[i]][{c.winner, i == 0 ? c.rule : ""}].push_back(c.task.tid);
  std::map<std::string, std::string> out;
  for (const auto& [loser, wins] : by_loser) {
    std::string text;
    for (const auto& [who, tids] : wins)
      text += (text.empty() ? "" : "; ") + std::string("lost the conflict to ") + who.first +
              (who.second.empty() ? "" : " (" + who.second + ")") + " on " + tid_list(tids);
    out.emplace(loser, std::move(text));
  }
  return out;
}

std::string intent_diagnosis(const std::string& policy_key, const std::vector<std::string>& stale_warnings,
                             const std::map<std::string, std::string>& lost) {
  std::string out;
  const std::string prefix = policy_key + ": ";
  for (const auto& w : stale_warnings)
    out += (out.empty() ? "" : "; ") + (w.rfind(prefix, 0) == 0 ? w.substr(prefix.size()) : w);
  if (auto it = lost.find(policy_key); it != lost.end()) out += (out.empty() ? "" : "; ") + it->second;
  return out;
}

}  // namespace c2c::daemon
