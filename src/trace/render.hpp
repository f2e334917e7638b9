// JSON renderings of the core's outputs (lineage, plans, conflicts, violations, previews).
#pragma once

#include <nlohmann/json.hpp>

#include "core/core.hpp"

namespace c2c::trace {

nlohmann::json to_json(const Lineage& l);
nlohmann::json to_json(const PlanOp& op);
nlohmann::json to_json(const Plan& p);
nlohmann::json to_json(const Conflict& c);
nlohmann::json to_json(const Violation& v);
nlohmann::json to_json(const PreviewResult& p);

}  // namespace c2c::trace
