#include "host/wakeup_edges.hpp"

#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "host/bpf_object_path.hpp"
#include "host/bpf_rodata.hpp"
#include "kernel/errno_text.hpp"
#include "kernel/map_ops.hpp"
#include "wakeup_edges_abi.h"

namespace c2c::host {

static_assert(kActivityMaxFilter == C2C_WE_MAX_FILTER, "wakeup_edges.hpp's kActivityMaxFilter");

namespace {
// Attached in this order: every interrupt exit before any entry. An entry attached first can see
// a handler start whose exit runs before the exit's program is attached; that CPU's nesting depth
// then stays above 0 for good and every wakeup on it looks like an interrupt's (no edge at all:
// seen on this host in about one daemon start in five, on the CPU the workload ran on). An exit
// without its entry is harmless: the program never counts below 0.
constexpr const char* kPrograms[] = {"c2c_we_irq_out",    "c2c_we_softirq_out", "c2c_we_hrtimer_out",
                                     "c2c_we_irq_in",     "c2c_we_softirq_in",  "c2c_we_hrtimer_in",
                                     "c2c_we_on_waking",  "c2c_we_on_switch"};
}  // namespace

std::unique_ptr<WakeupEdgeTracer> WakeupEdgeTracer::open(std::string* err, const ActivityFilter& filter,
                                                         const std::filesystem::path& object) {
  auto fail = [&](const std::string& why) {
    if (err) *err = why;
    return nullptr;
  };
  if (filter.tgids.empty() && filter.cgroup_ids.empty()) return fail("filter: no tgid and no cgroup id to watch");
  if (filter.tgids.size() > C2C_WE_MAX_FILTER || filter.cgroup_ids.size() > C2C_WE_MAX_FILTER)
    return fail("filter: more than " + std::to_string(C2C_WE_MAX_FILTER) + " tgids or cgroup ids");
  std::filesystem::path path = object;
  if (path.empty()) {
    auto found = find_bpf_object("wakeup_edges", err);
    if (!found) return nullptr;
    path = *found;
  }
  std::unique_ptr<WakeupEdgeTracer> t(new WakeupEdgeTracer());
  std::string why;
  t->obj_ = kernel::BpfObject::open(path.string(), &why);
  if (!t->obj_) return fail(why);
  if (auto e = set_rodata_u32(t->obj_.get(), "c2c_cgroup_id_of", static_cast<uint32_t>(filter.cgroup_id_of)); !e.empty())
    return fail(path.string() + ": " + e);
  if (auto e = set_rodata_u32(t->obj_.get(), "c2c_we_use_cgroups", filter.cgroup_ids.empty() ? 0 : 1); !e.empty())
    return fail(path.string() + ": " + e);
  if (auto e = t->obj_.load(); !e.empty()) return fail(e);
  const int tgids_fd = t->tgids_fd_ = bpf_object__find_map_fd_by_name(t->obj_.get(), "c2c_we_tgids");
  const int cgroups_fd = bpf_object__find_map_fd_by_name(t->obj_.get(), "c2c_we_cgroups");
  t->threads_fd_ = bpf_object__find_map_fd_by_name(t->obj_.get(), "c2c_we_threads");
  t->edges_fd_ = bpf_object__find_map_fd_by_name(t->obj_.get(), "c2c_we_edges");
  t->drops_fd_ = bpf_object__find_map_fd_by_name(t->obj_.get(), "c2c_we_drops");
  if (tgids_fd < 0 || cgroups_fd < 0 || t->threads_fd_ < 0 || t->edges_fd_ < 0 || t->drops_fd_ < 0)
    return fail(path.string() + ": a c2c_we_* map is missing");
  const uint8_t one = 1;
  for (uint32_t tgid : filter.tgids)
    if (const int e = kernel::map_update(tgids_fd, &tgid, &one); e != 0)
      return fail("c2c_we_tgids: tgid " + std::to_string(tgid) + ": " + kernel::errno_text(e));
  t->tgids_ = filter.tgids;
  std::sort(t->tgids_.begin(), t->tgids_.end());
  for (uint64_t id : filter.cgroup_ids)
    if (const int e = kernel::map_update(cgroups_fd, &id, &one); e != 0)
      return fail("c2c_we_cgroups: cgroup id " + std::to_string(id) + ": " + kernel::errno_text(e));
  for (const char* name : kPrograms) {
    bpf_program* prog = bpf_object__find_program_by_name(t->obj_.get(), name);
    if (prog == nullptr) return fail(path.string() + ": no program " + name);
    kernel::BpfLink link(bpf_program__attach(prog));
    if (!link) return fail(std::string("attach ") + name + ": " + kernel::errno_text(errno));
    t->links_.push_back(std::move(link));
  }
  return t;
}

ActivityReading WakeupEdgeTracer::read(std::string* err, const std::string& proc_root) {
  ActivityReading r;
  auto fail = [&](const std::string& why) {
    if (err) *err = why;
    return ActivityReading{};
  };
  // Keys are collected first, then looked up: the programs keep writing meanwhile, so a key that
  // vanished between the two (it cannot: only read() deletes) or a new one is simply next time's.
  std::vector<uint32_t> gone;
  uint32_t tid = 0, next = 0;
  bool first = true;
  int walk = 0;
  while ((walk = kernel::map_next_key(threads_fd_, first ? nullptr : &tid, &next)) == 0) {
    first = false;
    tid = next;
    c2c_we_thread v{};
    if (kernel::map_lookup(threads_fd_, &tid, &v) != 0) continue;
    r.threads.push_back({tid, v.tgid, v.run_ns, v.runs, v.wakeups, v.wakes_given});
    const auto dir = proc_root + "/" + std::to_string(v.tgid) + "/task/" + std::to_string(tid);
    if (::access(dir.c_str(), F_OK) != 0) gone.push_back(tid);
  }
  if (walk != ENOENT) return fail(std::string("c2c_we_threads: ") + kernel::errno_text(walk));
  c2c_we_edge_key key{}, next_key{};
  first = true;
  std::vector<c2c_we_edge_key> gone_edges;
  while ((walk = kernel::map_next_key(edges_fd_, first ? nullptr : &key, &next_key)) == 0) {
    first = false;
    key = next_key;
    uint64_t n = 0;
    if (kernel::map_lookup(edges_fd_, &key, &n) != 0) continue;
    r.edges.push_back({key.waker, key.wakee, n});
    if (std::find(gone.begin(), gone.end(), key.waker) != gone.end() ||
        std::find(gone.begin(), gone.end(), key.wakee) != gone.end())
      gone_edges.push_back(key);
  }
  if (walk != ENOENT) return fail(std::string("c2c_we_edges: ") + kernel::errno_text(walk));
  for (const auto& k : gone_edges) kernel::map_delete(edges_fd_, &k);
  for (uint32_t g : gone) kernel::map_delete(threads_fd_, &g);
  for (uint32_t which : {C2C_WE_DROP_THREAD, C2C_WE_DROP_EDGE}) {
    uint64_t n = 0;
    if (const int e = kernel::map_lookup(drops_fd_, &which, &n); e != 0)
      return fail(std::string("c2c_we_drops: ") + kernel::errno_text(e));
    (which == C2C_WE_DROP_THREAD ? r.dropped_threads : r.dropped_edges) = n;
  }
  std::sort(r.threads.begin(), r.threads.end(), [](const auto& a, const auto& b) { return a.tid < b.tid; });
  std::sort(r.edges.begin(), r.edges.end(),
            [](const auto& a, const auto& b) { return std::pair(a.waker, a.wakee) < std::pair(b.waker, b.wakee); });
  return r;
}

std::string WakeupEdgeTracer::set_tgids(std::vector<uint32_t> tgids) {
  std::sort(tgids.begin(), tgids.end());
  tgids.erase(std::unique(tgids.begin(), tgids.end()), tgids.end());
  if (tgids.size() > C2C_WE_MAX_FILTER)
    return "filter: " + std::to_string(tgids.size()) + " tgids, at most " + std::to_string(C2C_WE_MAX_FILTER);
  for (uint32_t old : tgids_)
    if (!std::binary_search(tgids.begin(), tgids.end(), old)) {
      // ENOENT: already gone; anything else leaves the filter as it was known.
      if (const int e = kernel::map_delete(tgids_fd_, &old); e != 0 && e != ENOENT)
        return "c2c_we_tgids: delete tgid " + std::to_string(old) + ": " + kernel::errno_text(e);
    }
  const uint8_t one = 1;
  for (uint32_t tgid : tgids)
    if (!std::binary_search(tgids_.begin(), tgids_.end(), tgid)) {
      if (const int e = kernel::map_update(tgids_fd_, &tgid, &one); e != 0)
        return "c2c_we_tgids: tgid " + std::to_string(tgid) + ": " + kernel::errno_text(e);
    }
  tgids_ = std::move(tgids);
  return "";
}

}  // namespace c2c::host
