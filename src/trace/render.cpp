#include "trace/render.hpp"

#include "codec/trace_codec.hpp"
#include "core/names.hpp"

namespace c2c::trace {

using nlohmann::json;

json to_json(const Lineage& l) {
  json claims = json::array();
  for (const auto& c : l.claims) claims.push_back({{"uid", c.uid}, {"generation", c.generation}});
  return {{"claims", claims},
          {"podUID", l.pod_uid},
          {"cgroup", name_text(l.cgroup)},  // names are bytes, JSON is text (core/names.hpp)
          {"task", {{"tid", l.task.tid}, {"start", l.task.start}, {"tgid", l.tgid}, {"comm", name_text(l.comm)}}},
          {"policy",
           {{"kind", to_string(l.policy_kind)}, {"name", l.policy}, {"generation", l.policy_generation}}},
          {"role", l.role},
          {"roleSource", l.role_source},
          {"strategy", to_string(l.strategy)},
          {"entry", codec::encode_value(l.value)}};
}

json to_json(const PlanOp& op) {
  return {{"op", to_string(op.kind)}, {"tid", op.tid}, {"value", codec::encode_value(op.value)}, {"reason", op.reason}};
}

json to_json(const Plan& p) {
  json ops = json::array();
  for (const auto& op : p.ops) ops.push_back(to_json(op));
  return {{"ops", ops}, {"deferredDeletes", p.deferred_deletes}};
}

json to_json(const Conflict& c) {
  return {{"task", {{"tid", c.task.tid}, {"start", c.task.start}}},
          {"winner", c.winner},
          {"losers", c.losers},
          {"rule", c.rule}};
}

json to_json(const Violation& v) {
  json j{{"invariant", v.invariant}, {"message", v.message}, {"tid", v.tid}};
  if (v.lineage) j["lineage"] = to_json(*v.lineage);
  return j;
}

json to_json(const PreviewResult& p) {
  json matched = json::array();
  for (const auto& m : p.matched) {
    json j{{"tid", m.key.tid}, {"start", m.key.start}, {"tgid", m.tgid}, {"comm", name_text(m.comm)},
           {"strategy", to_string(m.strategy)}};
    j["intended"] = m.intended ? codec::encode_value(*m.intended) : json(nullptr);
    j["actual"] = m.actual ? codec::encode_value(*m.actual) : json(nullptr);
    matched.push_back(j);
  }
  json conflicts = json::array();
  for (const auto& c : p.conflicts) conflicts.push_back(to_json(c));
  json j{{"policy", {{"kind", to_string(p.kind)}, {"name", p.policy}, {"generation", p.policy_generation}}},
         {"nodeGeneration", p.node_generation},
         {"matched", matched},
         {"conflicts", conflicts},
         {"warnings", p.warnings}};
  if (!p.acknowledgement.empty()) j["warnings"].push_back(p.acknowledgement);
  if (!p.invalid_field.empty()) j["invalid"] = {{"field", p.invalid_field}, {"message", p.invalid_message}};
  return j;
}

}  // namespace c2c::trace
