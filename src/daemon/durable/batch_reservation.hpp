// Whether a command batch may skip the undo copy of the state (spec/daemon.md, "Durable before
// the map"). A batch that cannot be made durable must leave nothing behind, so the engine used to
// copy the whole core before the batch's first change: O(state) on every mutating call (4 ms of
// an UpsertPolicy at 10k tasks, 0.3 ms at a few hundred). The copy is only needed when the batch's
// log record can fail to be written; the engine rules out the failures it can foresee first (a
// broken log, no space for the record, no room for the next compaction, a lease that would have
// to be extended) and copies only when one of them is possible. Pure: the engine does the system
// calls (fallocate, statvfs) and passes their results.
#pragma once

#include <cstddef>
#include <cstdint>

namespace c2c::daemon {

// A log record's size bound per command: the JSON of a request's changes is at most 8x its
// protobuf (field names; a control character escapes to 6 bytes), plus what the daemon adds
// itself (a pod's cgroup path and cpuset: under 8 KiB).
inline constexpr uint64_t kRecordBytesPerRequestByte = 8;
inline constexpr uint64_t kRecordBytesPerCommand = 8192;
inline constexpr uint64_t kRecordFrameBytes = 8;  // length + CRC (state_log.hpp)
// Generations a command may use before the lease must be extended in the batch's commit (a
// command is a few events; each moves the generation at most once).
inline constexpr uint64_t kLeaseHeadroomPerCommand = 64;

inline uint64_t command_record_bound(size_t request_bytes) {
  return kRecordBytesPerCommand + kRecordBytesPerRequestByte * static_cast<uint64_t>(request_bytes);
}

// The facts the engine gathered, in the order it gathers them.
struct BatchRoom {
  bool log_healthy = false;     // a state log is open and not broken
  uint64_t generation = 0;      // the core's generation before the batch
  uint64_t lease_ceiling = 0;   // the durable ceiling of the generation lease
  size_t commands = 0;
  uint64_t record_bound = 0;    // kRecordFrameBytes + command_record_bound of each command
  bool record_reserved = false; // the log file holds allocated blocks for record_bound more bytes
  uint64_t free_bytes = 0;      // free on the log's file system, after the reservation
  uint64_t snapshot_bytes = 0;  // the last snapshot's size: the next compaction needs that much
};

inline bool lease_has_headroom(uint64_t generation, uint64_t lease_ceiling, size_t commands) {
  return lease_ceiling >= generation + kLeaseHeadroomPerCommand * static_cast<uint64_t>(commands);
}

// True when no foreseeable failure can keep the batch's record from being written: the write may
// then fail only for an I/O error, on which the daemon exits instead of taking the batch back
// (GroupCommit::commit, kExitUnwritableBatch).
inline bool batch_skips_undo_copy(const BatchRoom& r) {
  return r.log_healthy && lease_has_headroom(r.generation, r.lease_ceiling, r.commands) && r.record_reserved &&
         r.free_bytes >= r.record_bound + r.snapshot_bytes;
}

}  // namespace c2c::daemon
