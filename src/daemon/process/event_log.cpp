#include "daemon/process/event_log.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <map>
#include <type_traits>
#include <variant>

#include "daemon/process/logging.hpp"

namespace c2c::daemon {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

std::string policy_id(PolicyKind k, const std::string& name) { return std::string(to_string(k)) + "/" + name; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Fields intent_fields(const Intent& in) {
  Fields f{{"POLICY", policy_id(in.kind, in.policy)},
           {"GENERATION", std::to_string(in.generation)},
           {"INTENT_STATE", to_string(in.state)},
           {"TASKS", std::to_string(in.matched_tasks)},
           {"ENTRIES", std::to_string(in.applied_entries)}};
  if (!in.reason.empty()) f.emplace_back("REASON", in.reason);
  return f;
}

}  // namespace

Fields event_fields(const Event& e) {
  Fields f{{"EVENT", event_kind(e)}};
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, NodePolicyUpsert>) {
          f.emplace_back("POLICY", policy_id(PolicyKind::Node, ev.policy.name));
          f.emplace_back("GENERATION", std::to_string(ev.policy.generation));
        } else if constexpr (std::is_same_v<T, DraPolicyUpsert>) {
          f.emplace_back("POLICY", policy_id(PolicyKind::Dra, ev.policy.name));
          f.emplace_back("GENERATION", std::to_string(ev.policy.generation));
        } else if constexpr (std::is_same_v<T, PolicyDelete> || std::is_same_v<T, PreviewAck>) {
          f.emplace_back("POLICY", policy_id(ev.kind, ev.name));
          f.emplace_back("GENERATION", std::to_string(ev.generation));
        } else if constexpr (std::is_same_v<T, ClaimAllocated> || std::is_same_v<T, ClaimUpdated>) {
          f.emplace_back("CLAIM", ev.claim.uid);
          f.emplace_back("GENERATION", std::to_string(ev.claim.generation));
        } else if constexpr (std::is_same_v<T, ClaimDeallocated>) {
          f.emplace_back("CLAIM", ev.uid);
          f.emplace_back("GENERATION", std::to_string(ev.generation));
        } else if constexpr (std::is_same_v<T, PodBound>) {
          f.emplace_back("POD", ev.pod.uid);
        } else if constexpr (std::is_same_v<T, PodRemoved>) {
          f.emplace_back("POD", ev.uid);
        } else if constexpr (std::is_same_v<T, NodeInfoEvent>) {
          f.emplace_back("NODE", ev.node.name);
        } else if constexpr (std::is_same_v<T, TaskRoleSet>) {
          f.emplace_back("TID", std::to_string(ev.key.tid));
          f.emplace_back("ROLE", ev.role.empty() ? "-" : ev.role);
        } else if constexpr (std::is_same_v<T, ControllerWindow>) {
          f.emplace_back("POLICY", policy_id(ev.kind, ev.policy));
        } else if constexpr (std::is_same_v<T, NodeLabels>) {
          std::string labels;
          for (const auto& [k, v] : ev.labels) labels += (labels.empty() ? "" : ",") + k + "=" + v;
          f.emplace_back("NODE_LABELS", labels);
        }
      },
      e);
  return f;
}

LogRecord change_record(Fields fields, uint64_t node_generation, size_t changed_tasks) {
  LogRecord r;
  r.message = "change accepted";
  bool named = false;
  for (const auto& [k, v] : fields) named = named || k == "POLICY" || k == "CLAIM" || k == "POD" || k == "NODE" || k == "NODE_LABELS";
  r.info = named;
  r.fields = std::move(fields);
  r.fields.emplace_back("NODE_GENERATION", std::to_string(node_generation));
  r.fields.emplace_back("TASKS", std::to_string(changed_tasks));
  return r;
}

std::vector<LogRecord> intent_records(const std::vector<Intent>& before, const std::vector<Intent>& after) {
  std::map<std::pair<PolicyKind, std::string>, const Intent*> old;
  for (const auto& in : before) old[{in.kind, in.policy}] = &in;
  std::vector<LogRecord> out;
  for (const auto& in : after) {
    auto it = old.find({in.kind, in.policy});
    const Intent* prev = it == old.end() ? nullptr : it->second;
    if (it != old.end()) old.erase(it);
    // updated_unix_ms alone moving is no transition.
    if (prev && prev->generation == in.generation && prev->state == in.state && prev->reason == in.reason &&
        prev->matched_tasks == in.matched_tasks && prev->applied_entries == in.applied_entries)
      continue;
    LogRecord r;
    const bool new_generation = !prev || prev->generation != in.generation;
    r.message = std::string("intent ") + (new_generation ? "NEW" : to_string(prev->state)) + " -> " + to_string(in.state);
    r.fields = intent_fields(in);
    if (prev) r.fields.emplace_back("INTENT_FROM", to_string(prev->state));
    out.push_back(std::move(r));
  }
  for (const auto& [id, prev] : old) {
    LogRecord r;
    r.message = std::string("intent ") + to_string(prev->state) + " -> REMOVED";
    r.fields = {{"POLICY", policy_id(prev->kind, prev->policy)},
                {"GENERATION", std::to_string(prev->generation)},
                {"INTENT_STATE", "REMOVED"},
                {"INTENT_FROM", to_string(prev->state)}};
    out.push_back(std::move(r));
  }
  return out;
}

std::string logfmt(const LogRecord& r) {
  std::string out = r.message;
  for (const auto& [k, v] : r.fields) {
    out += " " + lower(k) + "=";
    bool quote = v.empty();
    for (char c : v) quote = quote || c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
    if (!quote) {
      out += v;
      continue;
    }
    out += '"';
    for (char c : v) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
  return out;
}

void emit(const LogRecord& r) {
  auto level = r.info ? spdlog::level::info : spdlog::level::debug;
  if (!spdlog::should_log(level)) return;
  JournalFields scope(r.fields);  // the journal sink, when installed, adds them to this line
  spdlog::log(level, "{}", logfmt(r));
}

}  // namespace c2c::daemon
