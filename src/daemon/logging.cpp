#include "daemon/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace c2c::daemon {
namespace {

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

std::string log_pattern(bool journald) { return journald ? "%*%v" : "%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v"; }

void setup_logging(const std::string& level) {
  bool journald = std::getenv("JOURNAL_STREAM") != nullptr;
  auto logger = std::make_shared<spdlog::logger>("claim2cored", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<SyslogPriorityFlag>('*').set_pattern(log_pattern(journald));
  logger->set_formatter(std::move(formatter));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  set_log_level(level);
}

void set_log_level(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

}  // namespace c2c::daemon
