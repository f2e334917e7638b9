// c2c-host-tool: what the host part sees on this node, as JSON (for people, demos and scripts).
//   tasks    [--pid N] [--method auto|bpf|procfs] [--cgroup]   one snapshot of tasks
//   events   [--comm REGEX] [--count N] [--timeout-ms N] [--pin P] follow fork/exec/exit/rename
//   topology [--sysfs DIR] [--node NAME]                        CPUs, NUMA, LLC, SMT, PCI
//   pod-cgroup PATH...                                          pod UID / container id of paths
#include <re2/re2.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "claim2core_abi.hpp"
#include "core/names.hpp"
#include "host/cgroup.hpp"
#include "host/task_cgroup.hpp"
#include "host/task_events.hpp"
#include "host/task_snapshot.hpp"
#include "host/topology.hpp"

using namespace c2c::host;
using c2c::name_matches;
using c2c::name_text;
using nlohmann::json;

namespace {

json task_json(const TaskInfo& t) {
  // Names are bytes, JSON is text (core/names.hpp).
  json j = {{"tid", t.tid}, {"tgid", t.tgid}, {"start_ticks", t.start_ticks}, {"comm", name_text(t.comm)}};
  if (t.cgroup_id != 0) j["cgroup_id"] = t.cgroup_id;
  if (!t.cgroup.empty()) j["cgroup"] = name_text(t.cgroup);
  if (t.cpuset) j["cpuset"] = t.cpuset->to_string();
  return j;
}

int cmd_tasks(std::optional<uint32_t> pid, const std::string& method, bool with_cgroup) {
  std::vector<TaskInfo> tasks;
  std::string source;
  if (method == "procfs") {
    ProcfsWalkOptions o;
    o.only_tgid = pid;
    tasks = walk_procfs(o);
    source = "procfs";
  } else {
    TaskSnapshotter s(true);
    if (method == "bpf" && s.source() != SnapshotSource::BpfIterator) {
      std::cerr << "c2c-host-tool: BPF task iterator unavailable: " << s.fallback_reason() << "\n";
      return 1;
    }
    tasks = s.snapshot(pid);
    source = to_string(s.source());
  }
  std::optional<CgroupMounts> mounts;
  if (with_cgroup) {
    ParseError err;
    mounts = CgroupMounts::discover(&err);
    if (!mounts) {
      std::cerr << "c2c-host-tool: " << err.to_string() << "\n";
      return 1;
    }
  }
  json out = {{"source", source}, {"tasks", json::array()}};
  for (auto& t : tasks) {
    if (with_cgroup) {
      ParseError err;
      if (!fill_cgroup_from_proc(t, &*mounts, &err)) continue;  // exited (or tid reused) meanwhile
    }
    out["tasks"].push_back(task_json(t));
  }
  std::cout << out.dump(1) << "\n";
  return 0;
}

int cmd_events(const std::string& comm_regex, int count, int timeout_ms, const std::string& pin) {
  RE2 re(comm_regex);
  if (!re.ok()) {
    std::cerr << "c2c-host-tool: --comm: invalid RE2 pattern: " << re.error() << "\n";
    return 2;
  }
  std::string err;
  auto stream = TaskEventStream::open(&err, {}, pin);
  if (!stream) {
    std::cerr << "c2c-host-tool: " << err << "\n";
    return 1;
  }
  int seen = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while ((count <= 0 || seen < count) && (timeout_ms <= 0 || std::chrono::steady_clock::now() < end)) {
    const int rc = stream->poll(100, [&](const TaskEvent& e) {
      if (count > 0 && seen >= count) return;
      if (!name_matches(e.task.comm, re)) return;
      json j = task_json(e.task);
      j["event"] = to_string(e.kind);
      if (e.kind == TaskEventKind::Exec) j["old_tid"] = e.old_tid;
      std::cout << j.dump() << std::endl;
      ++seen;
    });
    if (rc < 0 && rc != -EINTR) {
      std::cerr << "c2c-host-tool: ring buffer poll: " << rc << "\n";
      return 1;
    }
  }
  if (stream->dropped() > 0) std::cerr << "c2c-host-tool: " << stream->dropped() << " events dropped\n";
  return 0;
}

int cmd_topology(const std::string& sysfs, const std::string& node) {
  ParseError err;
  const auto t = read_topology(sysfs, &err);
  if (!t) {
    std::cerr << "c2c-host-tool: " << err.to_string() << "\n";
    return 1;
  }
  json j = {{"node", node}, {"online", t->online.to_string()}};
  for (const auto& [n, cpus] : t->numa_cpus) j["numa"][std::to_string(n)] = cpus.to_string();
  j["llc_groups"] = json::array();
  for (const auto& g : t->llc_groups) j["llc_groups"].push_back(g.to_string());
  j["smt_groups"] = json::array();
  for (const auto& g : t->smt_groups) j["smt_groups"].push_back(g.to_string());
  j["pci"] = json::object();
  for (const auto& [id, d] : t->pci) {
    json p = {{"numa_node", d.numa_node}, {"pcie_root", d.pcie_root}};
    if (d.local_cpus) p["local_cpus"] = d.local_cpus->to_string();
    j["pci"][id] = p;
  }
  j["pcie_root_cpus"] = json::object();
  for (const auto& [root, cpus] : t->pcie_root_cpus) j["pcie_root_cpus"][root] = cpus.to_string();
  std::cout << j.dump(1) << "\n";
  return 0;
}

int cmd_pod_cgroup(const std::vector<std::string>& paths) {
  int rc = 0;
  for (const auto& path : paths) {
    json j = {{"path", path}};
    if (const auto p = parse_pod_cgroup(path)) {
      j["pod_uid"] = p->pod_uid;
      j["pod_cgroup"] = p->pod_cgroup;
      j["container_id"] = p->container_id;
      j["runtime"] = to_string(p->runtime);
      j["driver"] = to_string(p->driver);
      j["qos"] = to_string(p->qos);
    } else {
      j["error"] = "not a kubepods pod cgroup";
      rc = 1;
    }
    std::cout << j.dump() << "\n";
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"c2c-host-tool: tasks, task events, topology and pod cgroups as this node sees them"};
  app.require_subcommand(1);

  auto* tasks = app.add_subcommand("tasks", "one snapshot of every task (or of one process)");
  uint32_t pid = 0;
  std::string method = "auto";
  bool with_cgroup = false;
  tasks->add_option("--pid", pid, "only this process's threads");
  tasks->add_option("--method", method, "auto (BPF iterator, else procfs), bpf or procfs")
      ->check(CLI::IsMember({"auto", "bpf", "procfs"}));
  tasks->add_flag("--cgroup", with_cgroup, "add each task's cgroup path and effective cpuset");

  auto* events = app.add_subcommand("events", "follow fork/exec/exit/rename events as JSON lines");
  std::string comm_regex = ".*";
  int count = 0, timeout_ms = 0;
  events->add_option("--comm", comm_regex, "RE2 pattern the comm must match (partial match)");
  events->add_option("--count", count, "stop after N events (0: never)");
  events->add_option("--timeout-ms", timeout_ms, "stop after this long (0: never)");
  std::string events_pin;
  events->add_option("--pin", events_pin, "write into this pinned ring buffer (e.g. " C2C_EVENTS_PIN ")");

  auto* topo = app.add_subcommand("topology", "CPU, NUMA, cache and PCI topology from sysfs");
  std::string sysfs = "/sys", node = "";
  topo->add_option("--sysfs", sysfs, "sysfs root (a fake tree for tests)");
  topo->add_option("--node", node, "node name to report");

  auto* podcg = app.add_subcommand("pod-cgroup", "pod UID and container id of cgroup paths");
  std::vector<std::string> paths;
  podcg->add_option("paths", paths, "cgroup paths")->required();

  CLI11_PARSE(app, argc, argv);
  if (*tasks) return cmd_tasks(pid != 0 ? std::optional<uint32_t>(pid) : std::nullopt, method, with_cgroup);
  if (*events) return cmd_events(comm_regex, count, timeout_ms, events_pin);
  if (*topo) return cmd_topology(sysfs, node);
  if (*podcg) return cmd_pod_cgroup(paths);
  return 2;
}
