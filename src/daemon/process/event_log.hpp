// Structured log records for what an operator follows between "ready" and SIGTERM: one line per
// accepted change (a committed batch's events) and one per intent transition, with the policy,
// its generation, the tasks and the map entries as fields. On a terminal or in a container log
// they are logfmt (key=value, values with spaces or quotes quoted); under journald the same
// fields also go as journal fields (POLICY=, GENERATION=, TASKS=, ENTRIES=, ...; logging.cpp), so
// `journalctl -u claim2cored POLICY=vllm-enginecore` selects them.
//
// Building a record is pure (tested); emit() hands it to the logger.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/events.hpp"
#include "daemon/node_state/intents.hpp"

namespace c2c::daemon {

struct LogRecord {
  bool info = true;  // false: debug (host task churn would flood info)
  std::string message;
  // (journal field name in upper case, value); the logfmt key is its lower-case form.
  std::vector<std::pair<std::string, std::string>> fields;
};

// The names an event carries, as fields: EVENT, POLICY (kind/name), GENERATION, CLAIM or POD.
std::vector<std::pair<std::string, std::string>> event_fields(const Event& e);

// A committed change: its event's fields, the node generation and how many tasks it changed.
// Host and internal events (no POLICY/CLAIM/POD/NODE field) are debug records.
LogRecord change_record(std::vector<std::pair<std::string, std::string>> fields, uint64_t node_generation,
                        size_t changed_tasks);

// The transitions from one intent table listing to the next (both as IntentTable::list gives
// them): new intents, state or reason changes, count changes, removed intents.
std::vector<LogRecord> intent_records(const std::vector<Intent>& before, const std::vector<Intent>& after);

// "message key=value key=\"two words\"" (logfmt).
std::string logfmt(const LogRecord& r);

// To the default logger (and the journal's fields when logging.cpp installed the journal sink).
void emit(const LogRecord& r);

}  // namespace c2c::daemon
