// The edge daemon's logger (spdlog). Every diagnostic of the running daemon goes through
// logger(); configure() decides where to (`--log-format`, `--log-level`, docs/EDGE.md "Logging"):
//
//   text      one line per event on stderr, kTextPattern, e.g.
//               2025-03-01T12:00:00.123Z [warn] rejected replay on "dsekp/data": ...
//             an ISO-8601 UTC timestamp with milliseconds, the level as --log-level spells it
//             (trace, debug, info, warn, error) in brackets, the message.
//   journald  one journal entry per event through spdlog's systemd sink: MESSAGE is the bare
//             message, PRIORITY follows the level (trace and debug 7, info 6, warn 4, error 3),
//             SYSLOG_IDENTIFIER is kJournalIdentifier. Without a journal socket the events go
//             to stderr as text lines instead (journald_sink.hpp): never lost, never blocking.
//
// Before configure() the logger writes text at info, so code and tests that never configure it
// still log sensibly. The logger is safe to use from any thread; configure() and set_level()
// may be called while other threads log (the sink swap is behind spdlog's dist_sink mutex).
#pragma once

#include <memory>

#include <spdlog/formatter.h>
#include <spdlog/logger.h>

#include "edge/logging/log_options.hpp"

namespace dsekp::edge::logging {

/// The spdlog pattern of a text line; `%*` is the level name as --log-level spells it (spdlog's
/// own `%l` would say "warning" and "critical"). Times are UTC (pattern_time_type::utc).
inline constexpr const char* kTextPattern = "%Y-%m-%dT%H:%M:%S.%eZ [%*] %v";

/// SYSLOG_IDENTIFIER of the journal entries (`journalctl -t dsekp-edge`).
inline constexpr const char* kJournalIdentifier = "dsekp-edge";

/// Sends the daemon's log to `format`, logging `level` and above. Throws std::runtime_error only
/// if spdlog cannot build the sink (out of memory); a missing journal is not an error.
void configure(LogFormat format, LogLevel level);

/// Changes the level only (SIGHUP); any thread.
void set_level(LogLevel level) noexcept;

/// The daemon's logger.
[[nodiscard]] spdlog::logger& logger();

/// A new formatter for the text format (kTextPattern, UTC): the stderr sinks use it; tests format
/// a message with it to check the documented pattern.
[[nodiscard]] std::unique_ptr<spdlog::formatter> text_formatter();

}  // namespace dsekp::edge::logging
