// JournaldSink: where `--log-format journald` sends each event. It is spdlog's systemd sink
// (sd_journal_send: MESSAGE, PRIORITY from the level, SYSLOG_IDENTIFIER) guarded for a host
// without a journal: libsystemd drops an entry silently when the journal socket is missing, so
// the sink looks for the socket itself (at most once a second) and, while it is missing or a
// send fails, writes the event as a text line on stderr instead (the kTextPattern of
// edge_logger.hpp), after one line saying so. Nothing here blocks on a missing journal; a
// journald that is alive but stalled blocks the sender as it does every journal client.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>

namespace dsekp::edge::logging {

/// The socket sd_journal_send writes to (systemd's fixed path).
inline constexpr const char* kJournalSocket = "/run/systemd/journal/socket";

/// Not thread-safe on its own (null mutex): the logger puts it behind a locked dist_sink.
class JournaldSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  /// `identifier`: the SYSLOG_IDENTIFIER of every entry. `socket_path`: whose existence decides
  /// between the journal and stderr (another path only in tests).
  explicit JournaldSink(const std::string& identifier, std::string socket_path = kJournalSocket);
  ~JournaldSink() override;

  /// Whether the last event went to the journal (false before the first event).
  [[nodiscard]] bool to_journal() const noexcept { return state_ == State::journal; }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override;

 private:
  enum class State { unknown, journal, fallback };
  void switch_to(State next, const std::string& why);

  std::string socket_path_;
  std::unique_ptr<spdlog::sinks::sink> journal_;   // spdlog's systemd_sink_st
  std::unique_ptr<spdlog::sinks::sink> fallback_;  // stderr, text pattern
  State state_ = State::unknown;
  std::chrono::steady_clock::time_point checked_{};
};

}  // namespace dsekp::edge::logging
