#include "host/wakeup_edges.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "host/bpf_errno.hpp"
#include "host/bpf_object_path.hpp"
#include "host/bpf_rodata.hpp"
#include "wakeup_edges_abi.h"

namespace c2c::host {

namespace {
constexpr const char* kPrograms[] = {"c2c_we_irq_in",     "c2c_we_irq_out",    "c2c_we_softirq_in",
                                     "c2c_we_softirq_out", "c2c_we_hrtimer_in", "c2c_we_hrtimer_out",
                                     "c2c_we_on_waking",   "c2c_we_on_switch"};
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
  t->obj_ = bpf_object__open_file(path.c_str(), nullptr);
  if (t->obj_ == nullptr) return fail("open " + path.string() + ": " + bpf_errno_text(errno));
  if (auto e = set_rodata_u32(t->obj_, "c2c_cgroup_id_of", static_cast<uint32_t>(filter.cgroup_id_of)); !e.empty())
    return fail(path.string() + ": " + e);
  if (auto e = set_rodata_u32(t->obj_, "c2c_we_use_cgroups", filter.cgroup_ids.empty() ? 0 : 1); !e.empty())
    return fail(path.string() + ": " + e);
  if (const int rc = bpf_object__load(t->obj_); rc != 0) return fail("load " + path.string() + ": " + bpf_errno_text(rc));
  const int tgids_fd = bpf_object__find_map_fd_by_name(t->obj_, "c2c_we_tgids");
  const int cgroups_fd = bpf_object__find_map_fd_by_name(t->obj_, "c2c_we_cgroups");
  t->threads_fd_ = bpf_object__find_map_fd_by_name(t->obj_, "c2c_we_threads");
  t->edges_fd_ = bpf_object__find_map_fd_by_name(t->obj_, "c2c_we_edges");
  t->drops_fd_ = bpf_object__find_map_fd_by_name(t->obj_, "c2c_we_drops");
  if (tgids_fd < 0 || cgroups_fd < 0 || t->threads_fd_ < 0 || t->edges_fd_ < 0 || t->drops_fd_ < 0)
    return fail(path.string() + ": a c2c_we_* map is missing");
  const uint8_t one = 1;
  for (uint32_t tgid : filter.tgids)
    if (bpf_map_update_elem(tgids_fd, &tgid, &one, BPF_ANY) != 0)
      return fail("c2c_we_tgids: tgid " + std::to_string(tgid) + ": " + bpf_errno_text(errno));
  for (uint64_t id : filter.cgroup_ids)
    if (bpf_map_update_elem(cgroups_fd, &id, &one, BPF_ANY) != 0)
      return fail("c2c_we_cgroups: cgroup id " + std::to_string(id) + ": " + bpf_errno_text(errno));
  for (const char* name : kPrograms) {
    bpf_program* prog = bpf_object__find_program_by_name(t->obj_, name);
    if (prog == nullptr) return fail(path.string() + ": no program " + name);
    bpf_link* link = bpf_program__attach(prog);
    if (link == nullptr) return fail(std::string("attach ") + name + ": " + bpf_errno_text(errno));
    t->links_.push_back(link);
  }
  return t;
}

WakeupEdgeTracer::~WakeupEdgeTracer() {
  for (bpf_link* l : links_) bpf_link__destroy(l);
  if (obj_ != nullptr) bpf_object__close(obj_);
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
  while (bpf_map_get_next_key(threads_fd_, first ? nullptr : &tid, &next) == 0) {
    first = false;
    tid = next;
    c2c_we_thread v{};
    if (bpf_map_lookup_elem(threads_fd_, &tid, &v) != 0) continue;
    r.threads.push_back({tid, v.tgid, v.run_ns, v.runs, v.wakeups, v.wakes_given});
    const auto dir = proc_root + "/" + std::to_string(v.tgid) + "/task/" + std::to_string(tid);
    if (::access(dir.c_str(), F_OK) != 0) gone.push_back(tid);
  }
  if (errno != ENOENT) return fail(std::string("c2c_we_threads: ") + bpf_errno_text(errno));
  c2c_we_edge_key key{}, next_key{};
  first = true;
  std::vector<c2c_we_edge_key> gone_edges;
  while (bpf_map_get_next_key(edges_fd_, first ? nullptr : &key, &next_key) == 0) {
    first = false;
    key = next_key;
    uint64_t n = 0;
    if (bpf_map_lookup_elem(edges_fd_, &key, &n) != 0) continue;
    r.edges.push_back({key.waker, key.wakee, n});
    if (std::find(gone.begin(), gone.end(), key.waker) != gone.end() ||
        std::find(gone.begin(), gone.end(), key.wakee) != gone.end())
      gone_edges.push_back(key);
  }
  if (errno != ENOENT) return fail(std::string("c2c_we_edges: ") + bpf_errno_text(errno));
  for (const auto& k : gone_edges) bpf_map_delete_elem(edges_fd_, &k);
  for (uint32_t g : gone) bpf_map_delete_elem(threads_fd_, &g);
  for (uint32_t which : {C2C_WE_DROP_THREAD, C2C_WE_DROP_EDGE}) {
    uint64_t n = 0;
    if (bpf_map_lookup_elem(drops_fd_, &which, &n) != 0) return fail(std::string("c2c_we_drops: ") + bpf_errno_text(errno));
    (which == C2C_WE_DROP_THREAD ? r.dropped_threads : r.dropped_edges) = n;
  }
  std::sort(r.threads.begin(), r.threads.end(), [](const auto& a, const auto& b) { return a.tid < b.tid; });
  std::sort(r.edges.begin(), r.edges.end(),
            [](const auto& a, const auto& b) { return std::pair(a.waker, a.wakee) < std::pair(b.waker, b.wakee); });
  return r;
}

}  // namespace c2c::host
