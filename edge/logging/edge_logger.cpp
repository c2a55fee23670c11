// The daemon's logger (see edge_logger.hpp).
#include "edge/logging/edge_logger.hpp"

#include <string_view>

#include <spdlog/details/log_msg.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "edge/logging/journald_sink.hpp"

namespace dsekp::edge::logging {
namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::trace:
      return spdlog::level::trace;
    case LogLevel::debug:
      return spdlog::level::debug;
    case LogLevel::info:
      return spdlog::level::info;
    case LogLevel::warn:
      return spdlog::level::warn;
    case LogLevel::error:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

// `%*`: the level as --log-level spells it, so a line's level can be fed back to the flag.
class LevelName final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view name = "critical";  // never logged by the edge; spdlog's highest level
    switch (msg.level) {
      case spdlog::level::trace:
        name = "trace";
        break;
      case spdlog::level::debug:
        name = "debug";
        break;
      case spdlog::level::info:
        name = "info";
        break;
      case spdlog::level::warn:
        name = "warn";
        break;
      case spdlog::level::err:
        name = "error";
        break;
      default:
        break;
    }
    dest.append(name.data(), name.data() + name.size());
  }
  [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelName>();
  }
};

std::shared_ptr<spdlog::sinks::sink> text_sink() {
  // _st: the dist_sink in front of it holds the lock.
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_st>();
  sink->set_formatter(text_formatter());
  return sink;
}

struct State {
  std::shared_ptr<spdlog::sinks::dist_sink_mt> sinks;
  std::shared_ptr<spdlog::logger> logger;
};

State& state() {
  static State s = [] {
    auto sinks = std::make_shared<spdlog::sinks::dist_sink_mt>();
    sinks->set_sinks({text_sink()});
    // Not registered with spdlog's global registry: only this module hands it out.
    auto logger = std::make_shared<spdlog::logger>(kJournalIdentifier, sinks);
    logger->set_level(spdlog::level::info);
    return State{std::move(sinks), std::move(logger)};
  }();
  return s;
}

}  // namespace

std::unique_ptr<spdlog::formatter> text_formatter() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<LevelName>('*').set_pattern(kTextPattern);
  return formatter;
}

void configure(LogFormat format, LogLevel level) {
  State& s = state();
  if (format == LogFormat::journald) {
    s.sinks->set_sinks({std::make_shared<JournaldSink>(kJournalIdentifier)});
  } else {
    s.sinks->set_sinks({text_sink()});
  }
  s.logger->set_level(to_spdlog(level));
}

void set_level(LogLevel level) noexcept {
  state().logger->set_level(to_spdlog(level));
}

spdlog::logger& logger() {
  return *state().logger;
}

}  // namespace dsekp::edge::logging
