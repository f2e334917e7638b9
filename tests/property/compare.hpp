// Field-by-field comparison of the core's outputs with the reference model's, with readable diffs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "naive_model.hpp"

namespace c2c::property {

std::string describe(const RuntimeValue& v);
std::string describe(const std::vector<Violation>& vs);

// nullopt when equal; else a description of every difference.
std::optional<std::string> diff_desired(const Core& core, const naive::NaiveModel& model);
std::optional<std::string> diff_plan(const Plan& core, const naive::NaivePlan& model);
std::optional<std::string> diff_conflicts(const std::vector<Conflict>& core,
                                          const std::map<uint32_t, naive::NaiveConflict>& model);

}  // namespace c2c::property
