// The applier's report as JSON, for the daemon's status API and the CLI.
#pragma once

#include <nlohmann/json.hpp>

#include "mirror/applier.hpp"

namespace c2c::mirror {

// {"ok", "error", "mapFull", "batched", "counts": {...}, "deferredDeletes": [tid...],
//  "entries": [{"tid", "op", "state", "attempts", "errno", "reason"}]}. With only_problems,
// "entries" lists only ops that did not succeed (a 100k-op report stays small).
nlohmann::json to_json(const ApplyReport& rep, bool only_problems = true);

}  // namespace c2c::mirror
