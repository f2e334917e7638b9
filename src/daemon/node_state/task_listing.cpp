#include "daemon/node_state/task_listing.hpp"

#include <unordered_map>

#include "core/names.hpp"
#include "host/cgroup.hpp"

namespace c2c::daemon {

namespace {

std::shared_ptr<const RE2> compile(const std::string& field, const std::string& pattern, FieldError* error) {
  if (pattern.empty()) return nullptr;
  if (pattern.size() > 1024) {
    *error = FieldError{field, "longer than 1024 bytes"};
    return nullptr;
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<const RE2>(pattern, opts);
  if (!re->ok()) {
    *error = FieldError{field, "invalid RE2 regex: " + re->error()};
    return nullptr;
  }
  return re;
}

}  // namespace

std::optional<TaskFilter> task_filter(const std::string& comm_regex, const std::string& title_regex, uint32_t tgid,
                                      bool matched_only, FieldError* error) {
  TaskFilter f;
  *error = FieldError{};
  f.comm = compile("comm_regex", comm_regex, error);
  if (!error->field.empty()) return std::nullopt;
  f.title = compile("title_regex", title_regex, error);
  if (!error->field.empty()) return std::nullopt;
  f.tgid = tgid;
  f.matched_only = matched_only;
  return f;
}

std::vector<node::TaskRow> list_tasks(const Core& core, const TaskFilter& f) {
  std::vector<node::TaskRow> out;
  const auto& desired = core.desired();
  const auto conflicts = core.conflicts();
  std::unordered_map<uint32_t, const Conflict*> conflict_of;
  for (const auto& c : conflicts) conflict_of[c.task.tid] = &c;
  for (const auto& t : core.tasks()) {
    if (f.tgid && t.tgid != f.tgid) continue;
    auto entry = desired.find(t.key.tid);
    const bool has_entry = entry != desired.end() && entry->second.value.start == t.key.start;
    if (f.matched_only && !has_entry) continue;
    if (f.comm && !name_matches(t.comm, *f.comm)) continue;  // on the name's text (core/names.hpp)
    if (f.title && !name_matches(t.title, *f.title)) continue;
    auto pod = host::parse_pod_cgroup(t.cgroup);
    node::TaskRow row{t, pod ? pod->pod_uid : std::string(), {}, {}, {}, {}, {}};
    if (has_entry) {
      const DesiredEntry& d = entry->second;
      if (d.origin) {
        row.policy = std::string(to_string(d.origin->kind)) + "/" + d.origin->policy;
        row.role = d.origin->role;
      }
      row.strategy = to_string(d.strategy);
      row.execution_class = to_string(d.value.exec_class);
      if (auto c = conflict_of.find(t.key.tid); c != conflict_of.end())
        for (const auto& loser : c->second->losers) row.outranked.push_back(loser + " (" + c->second->rule + ")");
      auto a = core.actual().find(t.key.tid);
      row.applied = a != core.actual().end() && a->second.start == t.key.start;
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace c2c::daemon
