// spdlog set up for where claim2cored runs: under systemd (JOURNAL_STREAM names stderr) every
// line goes to the journal with sd_journal_send: MESSAGE, PRIORITY and the fields of the
// structured records (event_log.hpp) as journal fields; journald adds its own timestamp. If the
// journal cannot be written the line goes to stderr with the "<N>" priority prefix journald
// parses. Elsewhere (a terminal, a container log) lines carry an ISO 8601 timestamp with its
// zone offset and the level name.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace c2c::daemon {

// Installs the default logger on stderr. level: trace|debug|info|warn|error|critical|off.
void setup_logging(const std::string& level);
void set_log_level(const std::string& level);
// The pattern in use (tests check the journald form).
std::string log_pattern(bool journald);
// syslog priority of an spdlog level (info -> 6, warn -> 4, ...).
int syslog_priority(int spdlog_level);
// JOURNAL_STREAM ("<dev>:<inode>", set by systemd for journal stdio) names the stderr given by
// its device and inode: systemd's own test, so a variable inherited by a child whose stderr
// was redirected elsewhere does not count.
bool journal_stream_is(const char* journal_stream, unsigned long long dev, unsigned long long ino);

// While alive, the log lines this thread writes carry these journal fields (NAME, value); the
// stderr sink ignores them (the message already holds them as logfmt).
class JournalFields {
 public:
  explicit JournalFields(const std::vector<std::pair<std::string, std::string>>& fields);
  ~JournalFields();
  JournalFields(const JournalFields&) = delete;
  JournalFields& operator=(const JournalFields&) = delete;

 private:
  const std::vector<std::pair<std::string, std::string>>* previous_;
};

}  // namespace c2c::daemon
