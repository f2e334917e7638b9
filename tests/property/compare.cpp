#include "compare.hpp"

#include <map>
#include <sstream>

namespace c2c::property {

namespace {

std::string claims_text(const std::vector<ClaimRef>& cs) {
  std::string s = "[";
  for (const auto& c : cs) s += c.uid + "@" + std::to_string(c.generation) + " ";
  return s + "]";
}

void field(std::ostringstream& os, bool& differs, const char* name, const std::string& core,
           const std::string& model) {
  if (core == model) return;
  differs = true;
  os << "    " << name << ": core=" << core << " model=" << model << "\n";
}

const char* kind_text(PlanOp::Kind k) {
  switch (k) {
    case PlanOp::Kind::Add: return "add";
    case PlanOp::Kind::Update: return "update";
    case PlanOp::Kind::Delete: return "delete";
  }
  return "?";
}

}  // namespace

std::string describe(const RuntimeValue& v) {
  std::ostringstream os;
  os << "{start " << v.start << " gen " << v.generation << " class "
     << static_cast<int>(v.exec_class) << " slice " << v.slice_ns << " boost_until "
     << v.boost_until << " max_boost " << v.max_boost << " allowed " << v.allowed.to_string()
     << " preferred " << v.preferred.to_string() << " tgid " << v.tgid << " flags "
     << static_cast<int>(v.flags) << "}";
  return os.str();
}

std::string describe(const std::vector<Violation>& vs) {
  std::string s;
  for (const auto& v : vs) s += "  " + v.invariant + " tid " + std::to_string(v.tid) + ": " + v.message + "\n";
  return s;
}

std::optional<std::string> diff_desired(const Core& core, const naive::NaiveModel& model) {
  std::ostringstream os;
  bool differs = false;
  std::map<uint32_t, Lineage> mine;
  for (auto& l : core.desired_table()) mine.emplace(l.task.tid, l);
  const auto& theirs = model.desired();
  for (const auto& [tid, l] : mine) {
    if (theirs.count(tid) == 0) {
      differs = true;
      os << "  tid " << tid << ": only in the core: " << to_string(l.policy_kind) << "/" << l.policy
         << " " << describe(l.value) << "\n";
    }
  }
  for (const auto& [tid, e] : theirs) {
    auto it = mine.find(tid);
    if (it == mine.end()) {
      differs = true;
      os << "  tid " << tid << ": only in the model: " << to_string(e.kind) << "/" << e.policy << " "
         << describe(e.value) << "\n";
      continue;
    }
    const Lineage& l = it->second;
    std::ostringstream one;
    bool d = false;
    field(one, d, "value", describe(l.value), describe(e.value));
    field(one, d, "policy", std::string(to_string(l.policy_kind)) + "/" + l.policy + "@" +
                                std::to_string(l.policy_generation),
          std::string(to_string(e.kind)) + "/" + e.policy + "@" + std::to_string(e.policy_generation));
    field(one, d, "pod", l.pod_uid, e.pod_uid);
    field(one, d, "claims", claims_text(l.claims), claims_text(e.claims));
    field(one, d, "role", l.role, e.role);
    field(one, d, "role_source", l.role_source, e.role_source);
    field(one, d, "strategy", to_string(l.strategy), to_string(e.strategy));
    field(one, d, "task", std::to_string(l.task.tid) + "/" + std::to_string(l.task.start),
          std::to_string(tid) + "/" + std::to_string(e.value.start));
    field(one, d, "tgid", std::to_string(l.tgid), std::to_string(e.value.tgid));
    field(one, d, "comm", l.comm, e.comm);
    field(one, d, "cgroup", l.cgroup, e.cgroup);
    auto de = core.desired().find(tid);
    field(one, d, "restart_epoch", de == core.desired().end() ? "-" : std::to_string(de->second.restart_epoch),
          std::to_string(e.epoch));
    if (d) {
      differs = true;
      os << "  tid " << tid << ":\n" << one.str();
    }
  }
  if (!differs) return std::nullopt;
  return os.str();
}

std::optional<std::string> diff_plan(const Plan& core, const naive::NaivePlan& model) {
  std::ostringstream os;
  bool differs = false;
  const size_t n = std::max(core.ops.size(), model.ops.size());
  for (size_t i = 0; i < n; ++i) {
    const PlanOp* c = i < core.ops.size() ? &core.ops[i] : nullptr;
    const naive::Op* m = i < model.ops.size() ? &model.ops[i] : nullptr;
    std::string ct = c ? std::string(kind_text(c->kind)) + " " + std::to_string(c->tid) + " " + describe(c->value) : "-";
    std::string mt = m ? std::string(kind_text(m->kind)) + " " + std::to_string(m->tid) + " " + describe(m->value) : "-";
    std::string problem;
    if (ct != mt) {
      problem = "op differs";
    } else if (c->kind == PlanOp::Kind::Update && m->tid_reused &&
               c->reason.find("INV-2") == std::string::npos) {
      problem = "a start change must be reported as tid reuse (INV-2)";
    } else if (c->kind == PlanOp::Kind::Delete) {
      const char* tag = "INV-5";
      if (m->removal == naive::RemovalTag::ClaimDeallocated) tag = "INV-1";
      else if (m->removal == naive::RemovalTag::Restart) tag = "INV-7";
      else if (m->removal == naive::RemovalTag::Other) tag = nullptr;
      if (tag != nullptr && c->reason.find(tag) == std::string::npos)
        problem = std::string("the delete reason should name ") + tag;
    }
    if (!problem.empty()) {
      differs = true;
      os << "  op " << i << ": " << problem << "\n    core:  " << ct
         << (c ? " (" + c->reason + ")" : "") << "\n    model: " << mt << "\n";
    }
  }
  if (core.deferred_deletes != model.deferred) {
    differs = true;
    os << "  deferred deletes: core=";
    for (auto t : core.deferred_deletes) os << t << ' ';
    os << " model=";
    for (auto t : model.deferred) os << t << ' ';
    os << "\n";
  }
  if (!differs) return std::nullopt;
  return os.str();
}

std::optional<std::string> diff_conflicts(const std::vector<Conflict>& core,
                                          const std::map<uint32_t, naive::NaiveConflict>& model) {
  std::ostringstream os;
  auto text = [](const std::string& winner, const std::vector<std::string>& losers, const std::string& rule) {
    std::string s = winner + " over";
    for (const auto& l : losers) s += " " + l;
    return s + " (" + rule + ")";
  };
  std::map<uint32_t, std::string> mine;
  for (const auto& c : core) mine.emplace(c.task.tid, text(c.winner, c.losers, c.rule));
  std::map<uint32_t, std::string> theirs;
  for (const auto& [tid, c] : model) theirs.emplace(tid, text(c.winner, c.losers, c.rule));
  if (mine == theirs) return std::nullopt;
  for (const auto& [tid, t] : theirs)
    if (!mine.count(tid) || mine.at(tid) != t)
      os << "  tid " << tid << ": core " << (mine.count(tid) ? mine.at(tid) : "(none)") << " model " << t << "\n";
  for (const auto& [tid, t] : mine)
    if (!theirs.count(tid)) os << "  tid " << tid << ": core " << t << " model (none)\n";
  return os.str();
}

}  // namespace c2c::property
