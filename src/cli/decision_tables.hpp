// The controllers' decisions (issue 46) as the CLI shows them: `claim2core get decisions` and the
// controller lines of `claim2core explain TID`. Pure, like tables.hpp: from the client library's
// replies (api/replies.hpp).
#pragma once

#include <string>

#include "api/replies.hpp"
#include "cli/listing.hpp"

namespace c2c::cli {

// One row per decision, oldest first: TIME, POLICY, TIDS, LEVEL (from -> to), RUN DELAY P99, CPU
// SHARE (mean/max), RULE, REASON; wide: THREADS RAN, NO SIGNAL.
Listing decisions_listing(const reply::Decisions& r);
// explain's lines about the controller acting on the thread ("" when none).
std::string explain_controller_lines(const reply::Explain& r);
// explain's line about the role proposed for the thread from activity ("" when none):
// "  proposed role: critical-path (latency-critical), confidence 0.93: tid 7 wakes ... [policy, classify]".
std::string explain_proposal_lines(const reply::Explain& r);
// preview's lines about the roles proposed for the policy's threads ("" when none).
std::string preview_proposal_lines(const reply::Preview& r);

}  // namespace c2c::cli
