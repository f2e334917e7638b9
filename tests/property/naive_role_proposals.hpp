// The naive model of the roles proposed from activity (issue 46 item 4; spec/state-machine.md §11),
// written from the spec's text, not from src/core/role_proposals.cpp: every candidate of every
// thread is listed by scanning the whole window, then the best one is picked by the spec's order.
// Quadratic, which is fine for the property's small windows.
#pragma once

#include <vector>

#include "core/role_proposals.hpp"

namespace c2c::property {

struct NaiveProposal {
  uint32_t tid = 0;
  ProposedRole role = ProposedRole::CriticalPath;
  uint32_t confidence_permille = 0;
  uint32_t counterpart = 0;
};

std::vector<NaiveProposal> naive_propose_roles(const ActivityWindow& w);

// The outcome by the spec's table (mode x registered role x selector).
ProposalOutcome naive_outcome(ClassifyMode mode, bool registered_role, bool explicit_selector);

}  // namespace c2c::property
