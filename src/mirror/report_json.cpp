#include "mirror/report_json.hpp"

namespace c2c::mirror {

namespace {
const char* op_name(PlanOp::Kind k) {
  switch (k) {
    case PlanOp::Kind::Add: return "add";
    case PlanOp::Kind::Update: return "update";
    case PlanOp::Kind::Delete: return "delete";
  }
  return "?";
}
}  // namespace

nlohmann::json to_json(const ApplyReport& rep, bool only_problems) {
  nlohmann::json entries = nlohmann::json::array();
  for (const OpStatus& s : rep.ops) {
    if (only_problems && s.success()) continue;
    entries.push_back({{"tid", s.tid},
                       {"op", op_name(s.kind)},
                       {"state", to_string(s.state)},
                       {"attempts", s.attempts},
                       {"errno", s.err},
                       {"reason", s.reason}});
  }
  return {{"ok", rep.ok()},
          {"error", rep.error},
          {"mapFull", rep.map_full},
          {"batched", rep.batched},
          {"counts",
           {{"ops", rep.ops.size()},
            {"applied", rep.applied},
            {"absent", rep.absent},
            {"skipped", rep.skipped},
            {"failed", rep.failed},
            {"rolledBack", rep.rolled_back},
            {"deferred", rep.deferred.size()}}},
          {"deferredDeletes", rep.deferred},
          {"entries", std::move(entries)}};
}

}  // namespace c2c::mirror
