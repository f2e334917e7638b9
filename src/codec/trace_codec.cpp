#include "codec/trace_codec.hpp"

#include "core/core.hpp"
#include "codec/json_reader.hpp"
#include "codec/policy_codec.hpp"
#include "core/names.hpp"

namespace c2c::codec {

using nlohmann::json;

std::string ParseError::to_string() const {
  return "line " + std::to_string(line) + ": " + (field.empty() ? "" : field + ": ") + message;
}

namespace {

NodeInfo decode_node_info(const Reader& r) {
  r.only({"name", "labels", "cpus", "numa", "pcieRoots", "defaultMaxBoost"});
  NodeInfo n;
  n.name = r.str_or("name", "");
  n.labels = r.string_map("labels");
  n.cpus = r.cpus("cpus").value_or(CpuSet{});
  for (const auto& [k, v] : r.string_map("numa")) {
    int id = -1;
    try {
      size_t used = 0;
      id = std::stoi(k, &used);
      if (used != k.size()) id = -1;
    } catch (...) {
    }
    if (id < 0 || id > 1023) throw DecodeError(r.at("numa") + "." + k, "NUMA node id must be an integer in [0, 1023]");
    std::string error;
    auto s = CpuSet::parse(v, &error);
    if (!s) throw DecodeError(r.at("numa") + "." + k, "invalid CPU list: " + error);
    n.numa_cpus[id] = *s;
  }
  for (const auto& [k, v] : r.string_map("pcieRoots")) {
    std::string error;
    auto s = CpuSet::parse(v, &error);
    if (!s) throw DecodeError(r.at("pcieRoots") + "." + k, "invalid CPU list: " + error);
    n.pcie_root_cpus[k] = *s;
  }
  n.default_max_boost = r.duration_ns_or("defaultMaxBoost", n.default_max_boost);
  return n;
}

json encode_node_info(const NodeInfo& n) {
  json numa = json::object(), roots = json::object();
  for (const auto& [k, v] : n.numa_cpus) numa[std::to_string(k)] = v.to_string();
  for (const auto& [k, v] : n.pcie_root_cpus) roots[k] = v.to_string();
  return {{"name", n.name},   {"labels", n.labels},  {"cpus", n.cpus.to_string()},
          {"numa", numa},     {"pcieRoots", roots}, {"defaultMaxBoost", n.default_max_boost}};
}

Claim decode_claim(const Reader& r) {
  r.only({"uid", "generation", "node", "devices", "reservedFor"});
  Claim c;
  c.uid = r.str("uid");
  c.generation = r.i64("generation");
  c.node = r.str_or("node", "");
  for (const Reader& d : r.array("devices")) {
    d.only({"request", "driver", "pool", "device", "shareID", "numaNodes", "pcieRoot", "pciBusID", "cpus"});
    AllocatedDevice dev;
    dev.request = d.str_or("request", "");
    dev.driver = d.str("driver");
    dev.pool = d.str("pool");
    dev.device = d.str("device");
    dev.share_id = d.str_or("shareID", "");
    dev.numa_nodes = d.ints("numaNodes");
    dev.pcie_root = d.str_or("pcieRoot", "");
    dev.pci_bus_id = d.str_or("pciBusID", "");
    dev.cpus = d.cpus("cpus");
    c.devices.push_back(std::move(dev));
  }
  c.reserved_for = r.strings("reservedFor");
  return c;
}

json encode_claim(const Claim& c) {
  json devices = json::array();
  for (const auto& d : c.devices) {
    json j{{"driver", d.driver}, {"pool", d.pool}, {"device", d.device}};
    if (!d.request.empty()) j["request"] = d.request;
    if (!d.share_id.empty()) j["shareID"] = d.share_id;
    if (!d.numa_nodes.empty()) j["numaNodes"] = d.numa_nodes;
    if (!d.pcie_root.empty()) j["pcieRoot"] = d.pcie_root;
    if (!d.pci_bus_id.empty()) j["pciBusID"] = d.pci_bus_id;
    if (d.cpus) j["cpus"] = d.cpus->to_string();
    devices.push_back(j);
  }
  return {{"uid", c.uid}, {"generation", c.generation}, {"node", c.node}, {"devices", devices},
          {"reservedFor", c.reserved_for}};
}

Pod decode_pod(const Reader& r) {
  r.only({"uid", "namespace", "name", "labels", "claims", "cgroup", "cpuset", "taskRoles"});
  Pod p;
  p.uid = r.str("uid");
  p.namespace_ = r.str_or("namespace", "");
  p.name = r.str_or("name", "");
  p.labels = r.string_map("labels");
  p.claims = r.string_map("claims");
  p.cgroup = r.str_or("cgroup", "");
  p.cpuset = r.cpus("cpuset");
  if (r.has("taskRoles")) p.task_roles = r.string_map("taskRoles");
  return p;
}

json encode_pod(const Pod& p) {
  json j{{"uid", p.uid}, {"namespace", p.namespace_}, {"name", p.name}, {"labels", p.labels},
         {"claims", p.claims}, {"cgroup", p.cgroup}};
  if (p.cpuset) j["cpuset"] = p.cpuset->to_string();
  if (!p.task_roles.empty()) j["taskRoles"] = p.task_roles;
  return j;
}

Task decode_task(const Reader& r) {
  r.only({"tid", "tgid", "start", "comm", "title", "cgroup", "role", "cpuset"});
  Task t;
  t.key.tid = r.u32("tid");
  t.tgid = r.has("tgid") ? r.u32("tgid") : t.key.tid;
  t.key.start = r.u64("start");
  t.comm = r.name("comm");
  t.title = r.name_or("title", "");
  t.cgroup = r.name_or("cgroup", "");
  t.role = r.str_or("role", "");
  t.cpuset = r.cpus("cpuset");
  return t;
}

json encode_task(const Task& t) {
  json j{{"tid", t.key.tid}, {"tgid", t.tgid}, {"start", t.key.start}, {"comm", encode_name(t.comm)}};
  if (!t.title.empty()) j["title"] = encode_name(t.title);
  if (!t.cgroup.empty()) j["cgroup"] = encode_name(t.cgroup);
  if (!t.role.empty()) j["role"] = t.role;
  if (t.cpuset) j["cpuset"] = t.cpuset->to_string();
  return j;
}

PolicyKind decode_kind(const Reader& r) {
  const std::string k = r.str("policyKind");
  auto kind = policy_kind_from_string(k);
  if (!kind) r.fail("policyKind", "unknown policy kind '" + echo(k) + "'");
  return *kind;
}

}  // namespace

std::vector<std::string> flag_names(uint8_t flags) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : kRuntimeFlagNames)
    if (flags & bit) out.push_back(name);
  return out;
}

json encode_value(const RuntimeValue& v) {
  return {{"start", v.start},
          {"generation", v.generation},
          {"class", to_string(v.exec_class)},
          {"sliceNs", v.slice_ns},
          {"boostUntilNs", v.boost_until},
          {"maxBoostNs", v.max_boost},
          {"allowedCpus", v.allowed.to_string()},
          {"preferredCpus", v.preferred.to_string()},
          {"tgid", v.tgid},
          {"flags", flag_names(v.flags)}};
}

RuntimeValue decode_value(const Reader& r) {
  RuntimeValue v;
  v.start = r.u64("start");
  v.generation = r.u64("generation");
  const std::string cls = r.str_or("class", "unmatched");
  if (cls == "unmatched") v.exec_class = ExecClass::Unmatched;
  else if (auto c = exec_class_from_string(cls)) v.exec_class = *c;
  else r.fail("class", "unknown execution class '" + echo(cls) + "'");
  v.slice_ns = r.u64_or("sliceNs", 0);
  v.boost_until = r.u64_or("boostUntilNs", 0);
  v.max_boost = r.u64_or("maxBoostNs", 0);
  v.allowed = r.cpus("allowedCpus").value_or(CpuSet{});
  v.preferred = r.cpus("preferredCpus").value_or(CpuSet{});
  v.tgid = r.has("tgid") ? r.u32("tgid") : 0;
  const auto names = r.strings("flags");
  for (size_t i = 0; i < names.size(); ++i) {
    bool known = false;
    for (const auto& [bit, name] : kRuntimeFlagNames)
      if (names[i] == name) {
        v.flags = static_cast<uint8_t>(v.flags | bit);
        known = true;
      }
    if (!known) throw DecodeError(r.at("flags") + "[" + std::to_string(i) + "]", "unknown flag '" + names[i] + "'");
  }
  return v;
}

Event decode_event(const json& j) {
  Reader r(j, "");
  if (!r.has("v")) r.fail("v", "is required (trace format version)");
  if (r.i64("v") != kTraceVersion)
    r.fail("v", "unsupported trace format version " + std::to_string(r.i64("v")) + " (this build reads " +
                    std::to_string(kTraceVersion) + ")");
  const std::string kind = r.str("kind");
  if (kind == "node_info") {
    r.only({"v", "kind", "node"});
    return NodeInfoEvent{decode_node_info(r.child("node"))};
  }
  if (kind == "node_labels") {
    r.only({"v", "kind", "labels"});
    return NodeLabels{r.string_map("labels")};
  }
  if (kind == "claim_allocated" || kind == "claim_updated") {
    r.only({"v", "kind", "claim"});
    Claim c = decode_claim(r.child("claim"));
    if (kind == "claim_allocated") return ClaimAllocated{c};
    return ClaimUpdated{c};
  }
  if (kind == "claim_deallocated") {
    r.only({"v", "kind", "uid", "generation"});
    return ClaimDeallocated{r.str("uid"), r.i64_or("generation", 0)};
  }
  if (kind == "pod_bound") {
    r.only({"v", "kind", "pod"});
    return PodBound{decode_pod(r.child("pod"))};
  }
  if (kind == "pod_removed") {
    r.only({"v", "kind", "uid"});
    return PodRemoved{r.str("uid")};
  }
  if (kind == "task_seen") {
    r.only({"v", "kind", "task"});
    return TaskSeen{decode_task(r.child("task"))};
  }
  if (kind == "task_renamed") {
    r.only({"v", "kind", "tid", "start", "comm"});
    return TaskRenamed{{r.u32("tid"), r.u64("start")}, r.name("comm")};
  }
  if (kind == "task_role_set") {
    r.only({"v", "kind", "tid", "start", "role"});
    return TaskRoleSet{{r.u32("tid"), r.u64("start")}, r.str_or("role", "")};
  }
  if (kind == "task_exited") {
    r.only({"v", "kind", "tid", "start"});
    return TaskExited{{r.u32("tid"), r.u64("start")}};
  }
  if (kind == "policy_upsert") {
    r.only({"v", "kind", "policy"});
    AnyPolicy p = decode_policy(r.raw().at("policy"), "policy");
    if (auto* d = std::get_if<DraExecutionPolicy>(&p)) return DraPolicyUpsert{*d};
    return NodePolicyUpsert{std::get<NodeSchedulingPolicy>(p)};
  }
  if (kind == "policy_delete") {
    r.only({"v", "kind", "policyKind", "name", "generation"});
    return PolicyDelete{decode_kind(r), r.str("name"), r.i64_or("generation", 0)};
  }
  if (kind == "preview") {
    r.only({"v", "kind", "policyKind", "name", "generation"});
    return PreviewAck{decode_kind(r), r.str("name"), r.i64("generation")};
  }
  if (kind == "time_advance") {
    r.only({"v", "kind", "now", "maxRenewals"});
    TimeAdvance t{r.u64("now")};
    if (r.has("maxRenewals")) t.max_renewals = r.u32("maxRenewals");
    return t;
  }
  if (kind == "daemon_restart") {
    r.only({"v", "kind", "persistedGeneration"});
    return DaemonRestart{r.u64_or("persistedGeneration", 0)};
  }
  if (kind == "sync_complete") {
    r.only({"v", "kind"});
    return SyncComplete{};
  }
  if (kind == "bpf_observed") {
    r.only({"v", "kind", "entries"});
    BpfObserved ev;
    for (const Reader& e : r.array("entries")) {
      e.only({"tid", "start", "generation", "class", "sliceNs", "boostUntilNs", "maxBoostNs", "allowedCpus",
              "preferredCpus", "tgid", "flags"});
      ev.entries.push_back({e.u32("tid"), decode_value(e)});
    }
    return ev;
  }
  if (kind == "bpf_synced") {
    r.only({"v", "kind"});
    return BpfSynced{};
  }
  if (kind == "controller_window") {
    r.only({"v", "kind", "policyKind", "name", "signalNs"});
    ControllerWindow w{decode_kind(r), r.str("name"), std::nullopt};
    if (r.has("signalNs")) w.signal = r.u64("signalNs");
    return w;
  }
  r.fail("kind", "unknown event kind '" + echo(kind) + "'");
}

json encode_event(const Event& e) {
  json j{{"v", kTraceVersion}, {"kind", event_kind(e)}};
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, NodeInfoEvent>) j["node"] = encode_node_info(ev.node);
        else if constexpr (std::is_same_v<T, NodeLabels>) j["labels"] = ev.labels;
        else if constexpr (std::is_same_v<T, ClaimAllocated> || std::is_same_v<T, ClaimUpdated>) j["claim"] = encode_claim(ev.claim);
        else if constexpr (std::is_same_v<T, ClaimDeallocated>) {
          j["uid"] = ev.uid;
          j["generation"] = ev.generation;
        } else if constexpr (std::is_same_v<T, PodBound>) j["pod"] = encode_pod(ev.pod);
        else if constexpr (std::is_same_v<T, PodRemoved>) j["uid"] = ev.uid;
        else if constexpr (std::is_same_v<T, TaskSeen>) j["task"] = encode_task(ev.task);
        else if constexpr (std::is_same_v<T, TaskRenamed>) {
          j["tid"] = ev.key.tid;
          j["start"] = ev.key.start;
          j["comm"] = encode_name(ev.comm);
        } else if constexpr (std::is_same_v<T, TaskExited>) {
          j["tid"] = ev.key.tid;
          j["start"] = ev.key.start;
        } else if constexpr (std::is_same_v<T, TaskRoleSet>) {
          j["tid"] = ev.key.tid;
          j["start"] = ev.key.start;
          j["role"] = ev.role;
        } else if constexpr (std::is_same_v<T, DraPolicyUpsert> || std::is_same_v<T, NodePolicyUpsert>) j["policy"] = encode_policy(ev.policy);
        else if constexpr (std::is_same_v<T, PolicyDelete> || std::is_same_v<T, PreviewAck>) {
          j["policyKind"] = to_string(ev.kind);
          j["name"] = ev.name;
          j["generation"] = ev.generation;
        } else if constexpr (std::is_same_v<T, TimeAdvance>) {
          j["now"] = ev.now;
          if (ev.max_renewals) j["maxRenewals"] = *ev.max_renewals;
        }
        else if constexpr (std::is_same_v<T, DaemonRestart>) j["persistedGeneration"] = ev.persisted_generation;
        else if constexpr (std::is_same_v<T, ControllerWindow>) {
          j["policyKind"] = to_string(ev.kind);
          j["name"] = ev.policy;
          if (ev.signal) j["signalNs"] = *ev.signal;  // absent: a window without a signal
        }
        else if constexpr (std::is_same_v<T, BpfObserved>) {
          json entries = json::array();
          for (const auto& a : ev.entries) {
            json v = encode_value(a.value);
            v["tid"] = a.tid;
            entries.push_back(v);
          }
          j["entries"] = entries;
        }
      },
      e);
  return j;
}

std::variant<Event, ParseError> parse_line(const std::string& text, size_t line) {
  json j;
  try {
    j = parse_json_strict(text);
  } catch (const DecodeError& e) {  // a duplicate key
    return ParseError{line, e.field, e.what()};
  } catch (const json::exception& e) {  // parse_error, and out_of_range 406 for 1e999
    return ParseError{line, "", std::string("not valid JSON: ") + e.what()};
  }
  try {
    Event ev = decode_event(j);
    // Everything about the event that does not depend on the state is checked here, so that a
    // trace is refused whole, before its first line is applied (spec/trace-format.md).
    if (auto bad = validate(ev)) {
      std::string field = bad->field;
      if (std::holds_alternative<DraPolicyUpsert>(ev) || std::holds_alternative<NodePolicyUpsert>(ev))
        field = "policy." + field;
      return ParseError{line, field, bad->message};
    }
    return ev;
  } catch (const DecodeError& e) {
    return ParseError{line, e.field, e.what()};
  } catch (const json::exception& e) {
    return ParseError{line, "", std::string("malformed event: ") + e.what()};
  }
}

std::variant<std::vector<TraceEvent>, ParseError> parse_trace(std::istream& in) {
  std::vector<TraceEvent> events;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines separate sections
    auto r = parse_line(text, line);
    if (auto* err = std::get_if<ParseError>(&r)) return *err;
    events.push_back({line, std::move(std::get<Event>(r))});
  }
  return events;
}

}  // namespace c2c::codec
