// An intent of this node as the original's REST API shows it (GET .../node-scheduling-intents/self
// and the intent in POST/PUT replies). Pure; split from policy_body.* so that the request decoder
// (policy_body, json_body, request_decoder) builds without the CLI's tables.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "api/replies.hpp"

namespace c2c::rest {

using nlohmann::json;

// The intent's state in the original GUI's numbering (0 Pending, 1 Sent, 2 Applied, 3 Failed),
// so an old GUI shows the right badge; stateName spells it (reply::state_name). -1 for an
// unknown state.
int original_state_number(node::IntentState s);
// An intent of this node for policy p (p may be null when the policy went away meanwhile).
json intent_to_body(const reply::Intent& in, const std::string& id, const NodeSchedulingPolicy* p);

}  // namespace c2c::rest
