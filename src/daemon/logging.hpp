// spdlog set up for where claim2cored runs: under systemd (JOURNAL_STREAM set) lines carry no
// timestamp (journald adds its own) and start with the syslog priority "<N>" that journald
// parses; on a terminal they carry an ISO timestamp and the level name.
#pragma once

#include <string>

namespace c2c::daemon {

// Installs the default logger on stderr. level: trace|debug|info|warn|error|critical|off.
void setup_logging(const std::string& level);
void set_log_level(const std::string& level);
// The pattern in use (tests check the journald form).
std::string log_pattern(bool journald);
// syslog priority of an spdlog level (info -> 6, warn -> 4, ...).
int syslog_priority(int spdlog_level);

}  // namespace c2c::daemon
