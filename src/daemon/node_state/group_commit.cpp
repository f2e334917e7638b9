#include "daemon/node_state/group_commit.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>

#include "daemon/durable/batch_reservation.hpp"
#include "host/durable_file.hpp"

namespace c2c::daemon {

namespace {

// The log is folded into the snapshot once it passes this size (after the turn's replies).
constexpr uint64_t kCompactLogBytes = 1u << 20;
// The batch's record was reserved and still could not be written (an I/O error, fdatasync
// failing): nothing of the batch is on the map and there is no undo copy, so the daemon exits and
// the restart rebuilds from what is on disk (INV-7); after a failed fdatasync the file's pages
// cannot be trusted anyway (spec/daemon.md, "Durable before the map").
constexpr int kExitUnwritableBatch = 75;

}  // namespace

void GroupCommit::open(std::string state_path, std::unique_ptr<StateLog> log) {
  state_path_ = std::move(state_path);
  log_ = std::move(log);
}

void GroupCommit::begin(const std::vector<size_t>& request_bytes) {
  reserved_ = reserve(request_bytes);
  applying_ = true;
}

// Whether the batch's log record can be written without an undo copy: the log is healthy, the
// space for the record (bounded by the requests' sizes) is allocated in the log file, the file
// system keeps room for the next compaction, and the generation lease has headroom for the batch.
bool GroupCommit::reserve(const std::vector<size_t>& request_bytes) {
  BatchRoom room;
  room.log_healthy = log_ && !log_->broken();
  room.generation = node_.core.generation();
  room.lease_ceiling = node_.lease->durable();
  room.commands = request_bytes.size();
  room.record_bound = kRecordFrameBytes;
  for (size_t bytes : request_bytes) room.record_bound += command_record_bound(bytes);
  room.snapshot_bytes = snapshot_bytes_;
  // The system calls only when the cheap facts allow skipping the copy at all.
  if (room.log_healthy && lease_has_headroom(room.generation, room.lease_ceiling, room.commands)) {
    room.record_reserved = log_->reserve(room.record_bound).empty();
    // write_batch appends only while the next compaction still fits (else it compacts instead,
    // which can fail): that room is measured after the reservation took its blocks.
    if (room.record_reserved) room.free_bytes = log_->free_bytes();
  }
  return batch_skips_undo_copy(room);
}

// (A copy of the core: O(state) once per mutating batch, kept until the core offers an undo; the
// all-or-nothing of one request no longer copies it: Core::apply_all.)
void GroupCommit::before_change() {
  if (applying_ && !reserved_ && !undo_) {
    undo_.emplace(Undo{node_.core, node_.durable, node_.intents});
    metrics_.undo_copy();
  }
}

void GroupCommit::record(StateChange c) {
  apply_change(node_.durable, c);
  changes_.push_back(std::move(c));
}

std::string GroupCommit::commit() {
  std::string e;
  if (node_.core.generation() > node_.lease->durable())
    if (auto why = node_.lease->cover(node_.core.generation()); !why.empty()) e = "generation lease: " + why;
  if (e.empty()) {
    std::string why = write_batch();
    if (!why.empty()) e = "durable state: " + why;
  }
  changes_.clear();
  if (e.empty()) return "";
  if (reserved_) {
    // No undo copy was taken (reserve): the batch cannot be taken back in memory. Nothing of it
    // reached the map or a reply; the restart rebuilds from the disk (kExitUnwritableBatch).
    spdlog::critical("a reserved batch could not be made durable: {}; exiting so that the restart rebuilds "
                     "from the durable state (nothing of the batch is live)",
                     e);
    spdlog::shutdown();
    std::_Exit(kExitUnwritableBatch);
  }
  if (undo_) {
    node_.core = std::move(undo_->core);
    node_.durable = std::move(undo_->durable);
    node_.intents = std::move(undo_->intents);
  }
  return e;
}

void GroupCommit::end() {
  changes_.clear();  // (changes of a batch that changed no durable input: none worth a record)
  undo_.reset();
  reserved_ = false;
  applying_ = false;
}

std::string GroupCommit::compact() {
  node_.durable.intents = node_.intents.list();
  auto t0 = std::chrono::steady_clock::now();
  std::string text;
  try {  // as in write_batch: text JSON cannot hold is a refused write, not an escaped exception
    text = encode_state(node_.durable);
  } catch (const std::exception& ex) {
    spdlog::error("durable state not written: cannot encode it: {}", ex.what());
    return std::string("cannot encode the state: ") + ex.what();
  }
  std::string e = host::write_file_durably(state_path_, text);
  if (!e.empty()) {
    spdlog::error("durable state not written: {}", e);
    return e;
  }
  snapshot_bytes_ = text.size();
  // The snapshot holds every record now (its logSeq says so): a crash before this truncation
  // only leaves records the replay skips.
  if (log_ && log_->size() > 0)
    if (auto le = log_->reset(); !le.empty()) spdlog::warn("durable state log not emptied: {} (replay skips it)", le);
  metrics_.persisted();
  spdlog::trace("snapshot written in {} us",
                std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  return "";
}

void GroupCommit::compact_if_large() {
  if (log_ && log_->size() > kCompactLogBytes) {
    if (auto e = compact(); !e.empty()) spdlog::warn("compacting the durable state log: {} (the log keeps growing)", e);
  }
}

// The batch's changes as one log record, one fdatasync. The log only grows while the file system
// has room for the next compaction (a log that can never be folded into the snapshot would be a
// trap); without that room, or when the append fails, the batch is written as a compaction
// instead (the snapshot holds it then), which fails, on a full disk, naming state.json.tmp.
std::string GroupCommit::write_batch() {
  ++node_.durable.log_seq;  // rolled back with the batch (undo_) when nothing can be written
  std::string payload;
  // The encoder throws on text JSON cannot hold (nlohmann: a byte that is not UTF-8). Validation
  // keeps such text out (issue 42: one role with a byte above 0x7f aborted the daemon here, the
  // exception escaping the loop thread); should anything slip through, the batch is refused
  // like one the disk refused, never the process.
  try {
    payload = encode_changes(node_.durable.log_seq, changes_);
  } catch (const std::exception& e) {
    return std::string("cannot encode the batch's log record: ") + e.what();
  }
  std::string log_error;
  if (log_ && !log_->broken()) {
    uint64_t need = payload.size() + 8 + snapshot_bytes_;
    uint64_t free = log_->free_bytes();
    if (free < need) {
      log_error = "state log " + log_->path() + ": no room for the next snapshot (" + std::to_string(free) +
                  " bytes free, " + std::to_string(need) + " needed)";
    } else {
      auto t0 = std::chrono::steady_clock::now();
      log_error = log_->append(payload);
      if (log_error.empty()) {
        metrics_.persisted();
        spdlog::trace("batch of {} changes logged in {} us", changes_.size(),
                      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
        return "";
      }
      log_error = "state log: " + log_error;
    }
  }
  std::string e = compact();
  if (e.empty()) return "";
  return log_error.empty() ? e : log_error + "; the snapshot instead: " + e;
}

}  // namespace c2c::daemon
