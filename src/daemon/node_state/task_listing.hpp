// ListTasks (issue #15): which tasks a request selects (comm, process title, tgid, only those
// with an entry) and, for each, which policy it gets and why, read from the core's desired table
// and conflicts. Pure functions of the core; no protobuf (the engine's side of the typed node API).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "api/node_api.hpp"
#include "core/core.hpp"

namespace c2c::daemon {

struct TaskFilter {
  std::shared_ptr<const RE2> comm;
  std::shared_ptr<const RE2> title;
  uint32_t tgid = 0;
  bool matched_only = false;
};

// The patterns compiled, or *error names the field that is wrong ("comm_regex", "title_regex").
std::optional<TaskFilter> task_filter(const std::string& comm_regex, const std::string& title_regex, uint32_t tgid,
                                      bool matched_only, FieldError* error);
// Tasks sorted by tid, each with its pod and the policy it gets (and the ones it outranks).
std::vector<node::TaskRow> list_tasks(const Core& core, const TaskFilter& f);

}  // namespace c2c::daemon
