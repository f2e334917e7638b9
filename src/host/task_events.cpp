#include "host/task_events.hpp"

#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "claim2core_abi.hpp"
#include "host/bpf_object_path.hpp"
#include "host/bpf_rodata.hpp"
#include "host/events_ringbuf.hpp"
#include "kernel/errno_text.hpp"
#include "kernel/map_check.hpp"
#include "kernel/map_ops.hpp"
#include "kernel/pins.hpp"

namespace c2c::host {

namespace {
using kernel::errno_text;

constexpr const char* kPrograms[] = {"c2c_on_fork", "c2c_on_rename", "c2c_on_exec", "c2c_on_exit"};

// Why the map behind fd cannot carry the events ("" when it can): bpf_map__reuse_fd adopts
// whatever map it is given, so the layout is checked here.
std::string ring_problem(int fd) {
  std::string why;
  const auto facts = kernel::map_facts(fd, &why);
  if (!facts) return why;
  if (facts->type != BPF_MAP_TYPE_RINGBUF) return "not a ring buffer (type " + std::to_string(facts->type) + ")";
  if (auto p = events_ringbuf_bytes_problem(facts->max_entries)) return "ring buffer size: " + *p;
  return "";
}
}  // namespace

std::unique_ptr<TaskEventStream> TaskEventStream::open(std::string* err, const std::filesystem::path& object,
                                                       const std::filesystem::path& events_pin,
                                                       uint32_t private_ringbuf_bytes, CgroupIdOf cgroup_id_of) {
  if (events_pin.empty()) return open_impl(err, object, -1, {}, private_ringbuf_bytes, cgroup_id_of);
  const kernel::OpenedPin pin = kernel::open_pin(events_pin.string());
  if (!pin.fd) {
    if (err) *err = "events " + pin.what;
    return nullptr;
  }
  // reuse_fd keeps its own duplicate: the pin's fd closes when this returns.
  return open_impl(err, object, pin.fd.get(), "events pin " + events_pin.string(), 0, cgroup_id_of);
}

std::unique_ptr<TaskEventStream> TaskEventStream::open_on_map(std::string* err, int events_fd,
                                                              const std::filesystem::path& object,
                                                              CgroupIdOf cgroup_id_of) {
  return open_impl(err, object, events_fd, "events map fd " + std::to_string(events_fd), 0, cgroup_id_of);
}

std::unique_ptr<TaskEventStream> TaskEventStream::open_impl(std::string* err, const std::filesystem::path& object,
                                                            int events_fd, const std::string& what,
                                                            uint32_t private_bytes, CgroupIdOf cgroup_id_of) {
  std::filesystem::path path = object;
  if (path.empty()) {
    auto found = find_bpf_object("task_events", err);
    if (!found) return nullptr;
    path = *found;
  }
  std::unique_ptr<TaskEventStream> s(new TaskEventStream());
  std::string why;
  s->obj_ = kernel::BpfObject::open(path.string(), &why);
  if (!s->obj_) {
    if (err) *err = why;
    return nullptr;
  }
  bpf_map* rb = bpf_object__find_map_by_name(s->obj_.get(), C2C_EVENTS_MAP_NAME);
  if (rb == nullptr) {
    if (err) *err = path.string() + ": no map " C2C_EVENTS_MAP_NAME;
    return nullptr;
  }
  if (events_fd >= 0) {
    if (std::string p = ring_problem(events_fd); !p.empty()) {
      if (err) *err = what + ": " + p;
      return nullptr;
    }
    if (const int rc = bpf_map__reuse_fd(rb, events_fd); rc != 0) {
      if (err) *err = what + ": " + errno_text(rc);
      return nullptr;
    }
  } else if (private_bytes != 0) {
    if (auto p = events_ringbuf_bytes_problem(private_bytes)) {
      if (err) *err = "private ring buffer: " + *p;
      return nullptr;
    }
    if (const int rc = bpf_map__set_max_entries(rb, private_bytes); rc != 0) {
      if (err) *err = "private ring buffer of " + std::to_string(private_bytes) + " bytes: " + errno_text(rc);
      return nullptr;
    }
  }
  if (std::string e = set_rodata_u32(s->obj_.get(), "c2c_cgroup_id_of", static_cast<uint32_t>(cgroup_id_of)); !e.empty()) {
    if (err) *err = path.string() + ": " + e;
    return nullptr;
  }
  if (std::string e = s->obj_.load(); !e.empty()) {
    if (err) *err = e;
    return nullptr;
  }
  const int rb_fd = bpf_object__find_map_fd_by_name(s->obj_.get(), C2C_EVENTS_MAP_NAME);
  s->drops_fd_ = bpf_object__find_map_fd_by_name(s->obj_.get(), "c2c_ev_drops");
  s->quiet_fd_ = bpf_object__find_map_fd_by_name(s->obj_.get(), "c2c_ev_quiet");
  if (rb_fd < 0 || s->drops_fd_ < 0 || s->quiet_fd_ < 0) {
    if (err) *err = path.string() + ": missing map " C2C_EVENTS_MAP_NAME ", c2c_ev_drops or c2c_ev_quiet";
    return nullptr;
  }
  // The drop counter is read with a load (dropped()): the map is BPF_F_MMAPABLE.
  s->drops_len_ = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* drops = ::mmap(nullptr, s->drops_len_, PROT_READ, MAP_SHARED, s->drops_fd_, 0);
  if (drops == MAP_FAILED) {
    if (err) *err = path.string() + ": cannot map c2c_ev_drops: " + errno_text(errno);
    return nullptr;
  }
  s->drops_ = static_cast<const uint64_t*>(drops);
  s->rb_ = ring_buffer__new(rb_fd, &TaskEventStream::on_sample, s.get(), nullptr);
  if (s->rb_ == nullptr) {
    if (err) *err = "ring_buffer__new: " + errno_text(errno);
    return nullptr;
  }
  // A pinned ring buffer outlives its consumer: what a killed daemon left unread was written
  // before our programs are attached, so it predates the snapshot the caller takes next and would
  // be replayed on top of it (a fork of a thread that died while nobody listened would come back
  // as a live task, its exit never recorded). Nothing writes between here and the attach below:
  // the previous writer's links died with it.
  const int stale = ring_buffer__consume(s->rb_);
  if (stale < 0) {
    if (err) *err = "draining the ring buffer: " + errno_text(stale);
    return nullptr;
  }
  s->stale_ = static_cast<uint64_t>(stale);
  for (size_t i = 0; i < std::size(kPrograms); ++i) {
    bpf_program* prog = bpf_object__find_program_by_name(s->obj_.get(), kPrograms[i]);
    if (prog == nullptr) {
      if (err) *err = path.string() + ": no program " + kPrograms[i];
      return nullptr;
    }
    s->links_[i] = kernel::BpfLink(bpf_program__attach(prog));
    if (!s->links_[i]) {
      if (err) *err = std::string("attach ") + kPrograms[i] + ": " + errno_text(errno);
      return nullptr;
    }
  }
  return s;
}

TaskEventStream::~TaskEventStream() {
  if (drops_ != nullptr) ::munmap(const_cast<uint64_t*>(drops_), drops_len_);
  if (rb_ != nullptr) ring_buffer__free(rb_);
  // links_ and then obj_ go with the members.
}

int TaskEventStream::on_sample(void* ctx, void* data, size_t size) {
  auto* self = static_cast<TaskEventStream*>(ctx);
  if (self->handler_ == nullptr) return 0;  // the drain at open: stale, discarded unread
  auto ev = decode_task_record(data, size);
  if (!ev) {
    ++self->malformed_;
    return 0;
  }
  (*self->handler_)(*ev);
  return 0;
}

int TaskEventStream::poll(int timeout_ms, const Handler& on_event) {
  handler_ = &on_event;
  // Not waiting: read whatever the ring buffer holds. ring_buffer__poll would only read what its
  // epoll reports, and a record written without a wake-up (set_wakeups(false)) is not reported.
  const int n = timeout_ms == 0 ? ring_buffer__consume(rb_) : ring_buffer__poll(rb_, timeout_ms);
  handler_ = nullptr;
  return n;
}

int TaskEventStream::epoll_fd() const { return ring_buffer__epoll_fd(rb_); }

std::string TaskEventStream::set_wakeups(bool on) {
  const uint32_t zero = 0, quiet = on ? 0 : 1;
  if (const int e = kernel::map_update(quiet_fd_, &zero, &quiet); e != 0)
    return std::string("c2c_ev_quiet: ") + errno_text(e);
  return "";
}

namespace {
// The facts of the ring buffer the object's programs write to; zeroed when unreadable.
kernel::MapFacts events_info(bpf_object* obj) {
  const int fd = bpf_object__find_map_fd_by_name(obj, C2C_EVENTS_MAP_NAME);
  const auto facts = fd < 0 ? std::nullopt : kernel::map_facts(fd);
  return facts.value_or(kernel::MapFacts{});
}
}  // namespace

uint32_t TaskEventStream::events_map_id() const { return events_info(obj_.get()).id; }

uint32_t TaskEventStream::ringbuf_bytes() const { return events_info(obj_.get()).max_entries; }

uint64_t TaskEventStream::dropped() const { return __atomic_load_n(drops_, __ATOMIC_RELAXED); }

}  // namespace c2c::host
