#include "daemon/durable/durable_load.hpp"

namespace c2c::daemon {

bool load_durable_state(const std::string& state_dir, LoadedState* out, std::string* err) {
  FieldError ferr;
  if (!load_state(state_dir + "/state.json", &out->state, &ferr)) {
    *err = "durable state " + ferr.field + ": " + ferr.message +
           " (refusing to start with a damaged state: move the file away to start empty)";
    return false;
  }
  // The log after the snapshot: records up to the snapshot's log_seq are in it already (a crash
  // between a compaction's rename and the log's truncation).
  LogScan scan;
  std::string why_log;
  out->log = StateLog::open(state_dir + "/state.log", &scan, &why_log);
  if (!out->log) {
    *err = "durable state log " + why_log + " (refusing to start with a damaged log: move the file away to start "
           "from the snapshot alone)";
    return false;
  }
  out->dropped = scan.dropped;
  uint64_t offset = 0;
  for (const auto& rec : scan.records) {
    uint64_t seq = 0;
    std::vector<StateChange> changes;
    if (!decode_changes(rec, &seq, &changes, &ferr)) {
      *err = "durable state log " + out->log->path() + ": record at offset " + std::to_string(offset) + ": " +
             ferr.field + ": " + ferr.message + " (refusing to start: move the file away to start from the snapshot)";
      return false;
    }
    offset += rec.size() + 8;
    if (seq <= out->state.log_seq) continue;
    for (const auto& c : changes) apply_change(out->state, c);
    out->state.log_seq = seq;
    ++out->replayed;
  }
  return true;
}

}  // namespace c2c::daemon
