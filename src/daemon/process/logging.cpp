#include "daemon/process/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace c2c::daemon {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;
thread_local const Fields* t_fields = nullptr;

// One journal entry per line: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER and the thread's fields.
class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::vector<std::string> items;
    items.push_back("MESSAGE=" + std::string(msg.payload.data(), msg.payload.size()));
    items.push_back("PRIORITY=" + std::to_string(syslog_priority(static_cast<int>(msg.level))));
    items.push_back("SYSLOG_IDENTIFIER=claim2cored");
    if (t_fields)
      for (const auto& [k, v] : *t_fields) items.push_back(k + "=" + v);
    std::vector<iovec> iov;
    for (auto& i : items) iov.push_back({i.data(), i.size()});
    if (sd_journal_sendv(iov.data(), static_cast<int>(iov.size())) < 0) {
      // No journal socket after all: the line still reaches stderr, which journald may read.
      std::fprintf(stderr, "<%d>%.*s\n", syslog_priority(static_cast<int>(msg.level)),
                   static_cast<int>(msg.payload.size()), msg.payload.data());
    }
  }
  void flush_() override {}
};

// "%*" -> "<N>": the syslog priority journald reads from the start of a line (sd-daemon(3)).
class SyslogPriorityFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    std::string p = "<" + std::to_string(syslog_priority(static_cast<int>(msg.level))) + ">";
    dest.append(p.data(), p.data() + p.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SyslogPriorityFlag>(); }
};

}  // namespace

int syslog_priority(int level) {
  switch (static_cast<spdlog::level::level_enum>(level)) {
    case spdlog::level::trace:
    case spdlog::level::debug: return 7;
    case spdlog::level::info: return 6;
    case spdlog::level::warn: return 4;
    case spdlog::level::err: return 3;
    case spdlog::level::critical: return 2;
    default: return 6;
  }
}

// %z: the zone offset (+00:00), so a container log or a copied line says which time it was.
std::string log_pattern(bool journald) { return journald ? "%*%v" : "%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v"; }

bool journal_stream_is(const char* journal_stream, unsigned long long dev, unsigned long long ino) {
  if (!journal_stream) return false;
  unsigned long long d = 0, i = 0;
  char tail = 0;
  if (std::sscanf(journal_stream, "%llu:%llu%c", &d, &i, &tail) != 2) return false;
  return d == dev && i == ino;
}

JournalFields::JournalFields(const Fields& fields) : previous_(t_fields) { t_fields = &fields; }
JournalFields::~JournalFields() { t_fields = previous_; }

void setup_logging(const std::string& level) {
  struct stat st {};
  bool journald = fstat(STDERR_FILENO, &st) == 0 &&
                  journal_stream_is(std::getenv("JOURNAL_STREAM"), static_cast<unsigned long long>(st.st_dev),
                                    static_cast<unsigned long long>(st.st_ino));
  spdlog::sink_ptr sink;
  if (journald)
    sink = std::make_shared<JournalSink>();
  else
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("claim2cored", sink);
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<SyslogPriorityFlag>('*').set_pattern(log_pattern(journald));
  logger->set_formatter(std::move(formatter));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  set_log_level(level);
}

void set_log_level(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

}  // namespace c2c::daemon
