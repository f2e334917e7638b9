// Preview: what a policy would do, computed without changing anything (read-only).
#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "core/core_impl.hpp"

namespace c2c {

namespace {

PreviewResult preview_with(const CoreImpl& s, PolicyKind kind, const std::string& name, int64_t generation,
                           const PolicyOverride& ov, const std::optional<std::string>& not_selected) {
  PreviewResult r;
  r.policy = name;
  r.kind = kind;
  r.node_generation = s.generation;
  const std::string key = std::string(to_string(kind)) + "/" + name;
  if (generation == 0) {
    auto hw = s.policy_high_water.find(key);
    generation = hw == s.policy_high_water.end() ? 1 : hw->second + 1;
  }
  r.policy_generation = generation;

  std::set<std::string> warnings;
  std::vector<uint32_t> tids;
  tids.reserve(s.tasks.size());
  for (const auto& [tid, t] : s.tasks) tids.push_back(tid);
  std::sort(tids.begin(), tids.end());
  for (uint32_t tid : tids) {
    const TaskState& t = s.tasks.at(tid);
    std::vector<std::string> w;
    auto cands = s.candidates(t, ov, &w);
    for (auto& msg : w)
      if (msg.find(key + ":") != std::string::npos) warnings.insert(msg);
    auto mine = std::find_if(cands.begin(), cands.end(), [&](const Candidate& c) { return c.kind == kind && c.policy == name; });
    if (mine == cands.end()) continue;
    MatchedTask m;
    m.key = t.key;
    m.tgid = t.tgid;
    m.comm = s.comm_of(t);
    m.title = s.title_of(t);
    m.strategy = mine->strategy;
    m.role = mine->role;
    m.role_source = mine->role_source;
    Conflict conflict;
    auto win = s.resolve(cands, &conflict);
    if (win && win->kind == kind && win->policy == name) {
      RuntimeValue v = win->value;
      v.generation = s.generation + 1;
      if (v.flags & kFlagBoost) v.boost_until = s.now + v.max_boost;
      m.intended = v;
    }
    if (!conflict.losers.empty()) {
      conflict.task = t.key;
      r.conflicts.push_back(conflict);
    }
    if (auto a = s.actual.find(tid); a != s.actual.end()) m.actual = a->second;
    r.matched.push_back(std::move(m));
  }
  if (not_selected)
    warnings.insert(key + ": node not selected: " + *not_selected);
  if (r.matched.empty()) warnings.insert(key + ": matches no task on this node");
  r.warnings.assign(warnings.begin(), warnings.end());
  return r;
}

// Generation 0 means "next", as in apply(): except that a spec identical to the stored one is the
// stored policy itself (apply() would ignore it as unchanged), so its preview is of that
// generation. Otherwise `apply -f` then `preview --acknowledge` of the same manifest would
// acknowledge a generation that never goes live.
template <class P>
int64_t preview_generation(const P& p, const P* existing) {
  if (p.generation != 0 || existing == nullptr) return p.generation;
  P same = p;
  same.generation = existing->generation;
  return same == *existing ? existing->generation : 0;
}

// The text, or a part of it that starts after a separator (':', '/', ' ', '-', '.', '_'), matches:
// "VLLM::EngineCore_DP0" holds "EngineCore_DP0", so the seed's ^EngineCore(_DP[0-9]+)?$, written
// for thread names, still finds the stock vLLM titles it was meant for.
// Names are matched as their text (names.hpp).
bool part_matches(const std::string& name, const RE2& re) {
  const std::string text = name_text(name);
  if (RE2::PartialMatch(text, re)) return true;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  const std::string_view v(text);
  for (size_t i = 0; i + 1 < v.size(); ++i)
    if (!word(v[i]) && word(v[i + 1]) && RE2::PartialMatch(v.substr(i + 1), re)) return true;
  return false;
}

// The tasks behind one text of an index: the title index holds them, the comm index counts them.
size_t task_count(const TidSet& members) { return members.size(); }
size_t task_count(const CoreImpl::CommTasks& members) { return members.count; }

// A policy that matches nothing often names the wrong field: stock vLLM's EngineCore threads are
// all called "VLLM::EngineCor" (setproctitle cuts the comm to 15 bytes) while the process title
// reads "VLLM::EngineCore_DP0". Say what the node's nearest candidates look like.
void add_did_you_mean(const CoreImpl& s, const NodePolicyState& st, std::vector<std::string>& warnings) {
  const NodeSchedulingPolicy& p = st.policy;
  const std::string key = "NodeSchedulingPolicy/" + p.name;
  auto hint = [&](const std::shared_ptr<const RE2>& re, const std::string& pattern, const auto& other_index,
                  const char* field, const char* noun, const char* other_field, const char* other_noun) {
    if (!re) return;
    size_t n = 0;
    std::string example;
    for (const auto& [text, members] : other_index)
      if (!text.empty() && part_matches(text, *re)) {
        n += task_count(members);
        if (example.empty()) example = name_text(text);  // a warning is text
      }
    if (n == 0) return;
    warnings.push_back(key + ": no " + noun + " matches " + field + " " + pattern + "; " + std::to_string(n) +
                       " thread(s) have a " + other_noun + " that does (e.g. '" + example + "'): did you mean " +
                       other_field + "?");
  };
  hint(st.regex.comm, p.command_regex, s.tids_by_title, "commandRegex", "comm", "processRegex", "process title");
  hint(st.regex.title, p.process_regex, s.tasks_by_comm, "processRegex", "process title", "commandRegex", "comm");
}

PreviewResult invalid_preview(PolicyKind kind, const std::string& name, const FieldError& e) {
  PreviewResult r;
  r.policy = name;
  r.kind = kind;
  r.invalid_field = e.field;
  r.invalid_message = e.message;
  return r;
}

}  // namespace

PreviewResult preview_dra(const CoreImpl& s, const DraExecutionPolicy& p) {
  CompiledPatterns compiled;  // the validation's, which the stand-in state takes
  if (auto e = validate(p, &compiled)) return invalid_preview(PolicyKind::Dra, p.name, *e);
  DraPolicyState st = DraPolicyState::of(p, &compiled);
  PolicyOverride ov;
  ov.dra = &st;
  auto stored = s.dra_policies.find(p.name);
  const int64_t generation =
      preview_generation(p, stored == s.dra_policies.end() ? nullptr : &stored->second.policy);
  auto r = preview_with(s, PolicyKind::Dra, p.name, generation, ov, std::nullopt);
  if (p.require_preview)
    r.acknowledgement = "requirePreview: the policy goes live after a preview of generation " +
                        std::to_string(r.policy_generation) + " is acknowledged";
  return r;
}

PreviewResult preview_node(const CoreImpl& s, const NodeSchedulingPolicy& p) {
  CompiledPatterns compiled;
  if (auto e = validate(p, &compiled)) return invalid_preview(PolicyKind::Node, p.name, *e);
  NodePolicyState st = NodePolicyState::of(p, &compiled);
  PolicyOverride ov;
  ov.node = &st;
  auto stored = s.node_policies.find(p.name);
  const int64_t generation =
      preview_generation(p, stored == s.node_policies.end() ? nullptr : &stored->second.policy);
  auto r = preview_with(s, PolicyKind::Node, p.name, generation, ov, s.node_not_selected(p));
  if (r.matched.empty()) add_did_you_mean(s, st, r.warnings);
  return r;
}

}  // namespace c2c
