// Policies' patterns on a task's comm and process title (spec/state-machine.md, "Matching"):
// compiled once when a policy or pod is stored, matched on one task, and the tasks a set of them
// matches, found through the comm and title indexes ("Incrementality").
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <atomic>

#include "core/core_impl.hpp"

namespace c2c {

namespace {
std::atomic<uint64_t> compiles{0};
}  // namespace

uint64_t regex_compiles() { return compiles.load(std::memory_order_relaxed); }

std::shared_ptr<const RE2> compile_regex(const std::string& pattern, const CompiledPatterns* reuse) {
  if (pattern.empty()) return nullptr;
  if (reuse)
    for (const auto& re : *reuse)
      if (re && re->pattern() == pattern) return re;
  RE2::Options opts;
  opts.set_log_errors(false);
  compiles.fetch_add(1, std::memory_order_relaxed);
  return std::make_shared<const RE2>(pattern, opts);
}

bool TitleAndComm::matches(const std::string& c, const std::string& t) const {
  if (empty()) return false;
  return (!comm || name_matches(c, *comm)) && (!title || name_matches(t, *title));
}

DraPolicyState DraPolicyState::of(const DraExecutionPolicy& p, const CompiledPatterns* reuse) {
  DraPolicyState st;
  st.policy = p;
  for (const auto& role : p.task_roles)
    st.role_regex.push_back(
        TitleAndComm{compile_regex(role.comm_regex, reuse), compile_regex(role.process_regex, reuse)});
  return st;
}

NodePolicyState NodePolicyState::of(const NodeSchedulingPolicy& p, const CompiledPatterns* reuse) {
  return NodePolicyState{p, TitleAndComm{compile_regex(p.command_regex, reuse), compile_regex(p.process_regex, reuse)}};
}

// Each pattern's first regex runs once per distinct comm (or, for a title-only policy, per
// distinct title), not once per task; matched leaders pull in their thread groups (TGID strategy).
// A comm pattern that some comm passes costs one pass over the tasks (shared by every such
// pattern; a comm with many tasks keeps no member set: tasks_by_comm), its title regex once
// per distinct title.
std::unordered_set<uint32_t> CoreImpl::tasks_matching(const std::vector<const TitleAndComm*>& patterns) const {
  std::unordered_set<uint32_t> out;
  auto take = [&](uint32_t tid) {
    out.insert(tid);
    if (tasks.at(tid).tgid == tid) add_thread_group(out, tid);
  };
  struct ByComm {
    const TitleAndComm* pattern;
    absl::flat_hash_set<uint32_t> comms;         // the comm ids its comm regex passes that keep no members
    absl::flat_hash_map<uint32_t, bool> titles;  // its title regex, per title id seen
  };
  // The rest of the pattern for a task whose comm passed: its title regex, if any.
  auto title_passes = [&](ByComm& b, const TaskState& t) {
    if (!b.pattern->title) return true;
    auto [title, fresh] = b.titles.try_emplace(t.title, false);
    if (fresh) title->second = name_matches(title_of(t), *b.pattern->title);
    return title->second;
  };
  std::vector<ByComm> by_comm;
  for (const TitleAndComm* p : patterns) {
    if (!p || p->empty()) continue;
    if (p->comm) {
      ByComm b{p, {}, {}};
      for (const auto& [text, c] : tasks_by_comm) {
        if (!name_matches(text, *p->comm)) continue;
        if (!c.members_kept) {
          b.comms.insert(strings.find(text));
          continue;
        }
        for (uint32_t tid : c.members)
          if (title_passes(b, tasks.at(tid))) take(tid);
      }
      if (!b.comms.empty()) by_comm.push_back(std::move(b));
      continue;
    }
    const RE2& first = *p->title;
    for (const auto& [text, tids] : tids_by_title) {
      if (!name_matches(text, first)) continue;
      for (uint32_t tid : tids) {
        const TaskState& t = tasks.at(tid);
        if (p->matches(comm_of(t), title_of(t))) take(tid);
      }
    }
    if (RE2::PartialMatch("", first))  // the untitled tasks, which the title index leaves out
      for (const auto& [tid, t] : tasks)
        if (t.title == 0 && p->matches(comm_of(t), title_of(t))) take(tid);
  }
  if (by_comm.empty()) return out;
  for (const auto& [tid, t] : tasks)
    for (ByComm& b : by_comm) {
      if (!b.comms.contains(t.comm) || !title_passes(b, t)) continue;
      take(tid);
      break;
    }
  return out;
}

}  // namespace c2c
