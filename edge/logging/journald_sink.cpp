// JournaldSink (see journald_sink.hpp).
#include "edge/logging/journald_sink.hpp"

#include <sys/stat.h>

#include <spdlog/common.h>
#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/systemd_sink.h>

#include "edge/logging/edge_logger.hpp"

namespace dsekp::edge::logging {
namespace {

// How often a missing (or present) socket is looked at again: a journald that starts after the
// edge is picked up within this, and a flood of events costs one stat() a second, not one each.
constexpr std::chrono::seconds kRecheck{1};

bool socket_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

JournaldSink::JournaldSink(const std::string& identifier, std::string socket_path)
    : socket_path_(std::move(socket_path)),
      // enable_formatting false: MESSAGE is the bare text; the journal has its own timestamp,
      // priority and identifier fields.
      journal_(std::make_unique<spdlog::sinks::systemd_sink_st>(identifier, false)),
      fallback_(std::make_unique<spdlog::sinks::stderr_sink_st>()) {
  fallback_->set_formatter(text_formatter());
}

JournaldSink::~JournaldSink() = default;

void JournaldSink::switch_to(State next, const std::string& why) {
  if (next == state_) return;
  const bool announce = next == State::fallback || state_ == State::fallback;
  state_ = next;
  if (!announce) return;  // the first event going to the journal needs no note
  const spdlog::details::log_msg note(spdlog::string_view_t{}, spdlog::level::warn, why);
  fallback_->log(note);
}

void JournaldSink::sink_it_(const spdlog::details::log_msg& msg) {
  const auto now = std::chrono::steady_clock::now();
  if (state_ == State::unknown || now - checked_ >= kRecheck) {
    checked_ = now;
    if (socket_exists(socket_path_)) {
      switch_to(State::journal,
                "journald socket " + socket_path_ + " is back: logging to the journal");
    } else {
      switch_to(State::fallback, "journald socket " + socket_path_ +
                                     " not found: logging text lines to stderr until it appears");
    }
  }
  if (state_ == State::journal) {
    try {
      journal_->log(msg);
      return;
    } catch (const spdlog::spdlog_ex& e) {
      // E.g. a system-call filter or a full journal: this event and those of the next second go
      // to stderr; the socket check then tries the journal again.
      switch_to(State::fallback, std::string("journald: ") + e.what() + ": logging to stderr");
      checked_ = now;
    }
  }
  fallback_->log(msg);
}

void JournaldSink::flush_() {
  fallback_->flush();
}

}  // namespace dsekp::edge::logging
