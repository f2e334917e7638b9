// The daemon's start from its durable files (spec/daemon.md, "The write path"): the snapshot
// state.json, then every record of state.log after the snapshot's logSeq, in order. A torn last
// record (a crash mid-append) is dropped and cut off the file; anything else damaged stops the
// start, naming the file and the field or offset. Used by Engine::startup and by the crash-
// consistency test, which runs it on every state a power loss could leave.
#pragma once

#include <memory>
#include <string>

#include "daemon/durable/durable_state.hpp"
#include "daemon/durable/state_log.hpp"

namespace c2c::daemon {

struct LoadedState {
  DurableState state;
  std::unique_ptr<StateLog> log;  // open, positioned after the last complete record
  size_t replayed = 0;            // records applied after the snapshot
  std::string dropped;            // the torn tail dropped ("" when none)
};

// false with *err (the start's refusal) when a file is damaged or cannot be read.
bool load_durable_state(const std::string& state_dir, LoadedState* out, std::string* err);

}  // namespace c2c::daemon
