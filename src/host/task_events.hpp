// Task discovery method (c): task lifecycle events (fork, exec, exit, rename) from BTF
// tracepoints over the BPF ring buffer C2C_EVENTS_MAP_NAME (bpf/task_events.bpf.c).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "host/cgroup_id_of.hpp"
#include "host/task_record.hpp"
#include "kernel/bpf_object.hpp"

struct ring_buffer;

namespace c2c::host {

class TaskEventStream {
 public:
  // Loads task_events.bpf.o and attaches the tracepoints; events flow from then on. Records
  // already in a pinned ring buffer (left by a previous consumer) are discarded before the attach:
  // they predate this stream (stale_discarded()).
  // With `events_pin` (e.g. C2C_EVENTS_PIN of the pinned map set), the programs write into that
  // pinned ring buffer instead of a private one; a pin that is not a ring buffer of a valid size
  // (events_ringbuf_bytes_problem) is refused. A private ring buffer has `private_ringbuf_bytes`
  // (0: the compiled-in C2C_EVENTS_RINGBUF_BYTES).
  static std::unique_ptr<TaskEventStream> open(std::string* err, const std::filesystem::path& object = {},
                                               const std::filesystem::path& events_pin = {},
                                               uint32_t private_ringbuf_bytes = 0,
                                               CgroupIdOf cgroup_id_of = CgroupIdOf::DefaultHierarchy);
  // The daemon's way: the ring buffer fd PinnedMaps holds (opened and verified there once), so the
  // pin is not opened again by path. The fd stays the caller's.
  // `cgroup_id_of`: which cgroup's id the records carry (TaskInfo::cgroup_id).
  static std::unique_ptr<TaskEventStream> open_on_map(std::string* err, int events_fd,
                                                      const std::filesystem::path& object = {},
                                                      CgroupIdOf cgroup_id_of = CgroupIdOf::DefaultHierarchy);
  ~TaskEventStream();
  TaskEventStream(const TaskEventStream&) = delete;
  TaskEventStream& operator=(const TaskEventStream&) = delete;

  using Handler = std::function<void(const TaskEvent&)>;
  // Waits up to timeout_ms (0: do not wait, -1: forever) and hands every available event to
  // `on_event` (with 0, also those written without a wake-up). Returns the number of events or
  // -errno. Malformed records are counted, not passed.
  int poll(int timeout_ms, const Handler& on_event);
  // An epoll fd that becomes readable when events are available (for the daemon's loop).
  int epoll_fd() const;
  // Whether a record wakes the reader (the default: the kernel wakes it for a record written when
  // it had read everything). Off while the reader polls on its own clock in a storm of events
  // (src/daemon/loop/task_event_pacing.hpp). "" or what failed.
  std::string set_wakeups(bool on);
  // Records the BPF side could not queue because the ring buffer was full: when this grows the
  // consumer has missed events and must rescan (procfs walk or iterator snapshot).
  uint64_t dropped() const;
  uint64_t malformed() const { return malformed_; }
  // Records found in the (pinned) ring buffer at open and discarded unread.
  uint64_t stale_discarded() const { return stale_; }
  // Kernel id of the ring buffer the programs write to (to tell a private one from a pinned one).
  uint32_t events_map_id() const;
  // Its size in bytes (records of kEventRecordBytes each).
  uint32_t ringbuf_bytes() const;

 private:
  TaskEventStream() = default;
  static std::unique_ptr<TaskEventStream> open_impl(std::string* err, const std::filesystem::path& object,
                                                    int events_fd, const std::string& what, uint32_t private_bytes,
                                                    CgroupIdOf cgroup_id_of);
  static int on_sample(void* ctx, void* data, size_t size);
  kernel::BpfObject obj_;
  kernel::BpfLink links_[4];  // destroyed before obj_ (declared after it)
  ring_buffer* rb_ = nullptr;
  int drops_fd_ = -1;
  const uint64_t* drops_ = nullptr;  // c2c_ev_drops' value, mapped (the kernel adds to it)
  size_t drops_len_ = 0;
  int quiet_fd_ = -1;
  const Handler* handler_ = nullptr;
  uint64_t malformed_ = 0;
  uint64_t stale_ = 0;
};

}  // namespace c2c::host
