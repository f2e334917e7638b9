// Group commit (spec/daemon.md, "Durable before the map"): a command batch's changes of the
// durable state are applied to it at once and written together, as one log record and one
// fdatasync, before any reply of the batch is sent and before the map sees the batch; or as a
// compaction (the snapshot) when the log cannot take it. A batch that cannot be made durable is
// rolled back to the undo copy taken before its first change; when its record was reserved
// (no copy taken: durable/batch_reservation.hpp) the process ends instead, and the restart
// rebuilds from the disk (INV-7). Part of the node state; the loop calls it at a batch's steps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/durable/durable_state.hpp"
#include "daemon/durable/state_log.hpp"
#include "daemon/node_state/node_state.hpp"
#include "daemon/process/metrics.hpp"

namespace c2c::daemon {

class GroupCommit {
 public:
  GroupCommit(NodeState& node, Metrics& metrics) : node_(node), metrics_(metrics) {}

  // The start: where the snapshot goes and the log the loader opened.
  void open(std::string state_path, std::unique_ptr<StateLog> log);
  StateLog* log() const { return log_.get(); }

  // A command batch begins (`request_bytes`: each command's request size, its record's bound).
  void begin(const std::vector<size_t>& request_bytes);
  // Before each change while the batch's commands apply: the undo copy, once, unless the batch's
  // record was reserved.
  void before_change();
  // The batch's commands are applied: changes after this (time advancing) take no undo copy.
  void applied() { applying_ = false; }
  // A change of the durable state: applied to it now, written with the batch's record.
  void record(StateChange c);
  // The batch's generation covered by the lease, then its changes written: "" or the error
  // (the node state rolled back then). Ends the process when a reserved batch cannot be written.
  std::string commit();
  // The batch is over (committed, refused, or it changed no durable input).
  void end();
  // Rewrites the snapshot (state.json: everything, intents included) and empties the log: "" or
  // the error.
  std::string compact();
  // After a turn's replies: the log folded into the snapshot once it passes 1 MiB.
  void compact_if_large();

 private:
  bool reserve(const std::vector<size_t>& request_bytes);
  std::string write_batch();  // the batch's changes: one log record, or a compaction

  NodeState& node_;
  Metrics& metrics_;
  std::string state_path_;
  std::unique_ptr<StateLog> log_;
  std::vector<StateChange> changes_;  // this batch's durable changes, not written yet
  uint64_t snapshot_bytes_ = 0;       // size of the last snapshot written (the room a compaction needs)
  // The state before the batch's first change, taken only when begin() could not make sure the
  // batch's record can be written: the copy is O(state) (4 ms of a call at 10k tasks).
  struct Undo {
    Core core;
    DurableState durable;
    IntentTable intents;
  };
  std::optional<Undo> undo_;
  bool applying_ = false;  // between begin() and applied()
  bool reserved_ = false;  // begin() reserved the batch's record
};

}  // namespace c2c::daemon
