// The edge daemon's two logging settings (`--log-format`, `--log-level`, TOML keys log_format and
// log_level) as values, and their names: the same spelling on the command line, in the TOML file
// and, for levels, in the text log lines (docs/EDGE.md, "Logging").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dsekp::edge::logging {

/// text: one line per event on stderr; journald: one journal entry per event.
enum class LogFormat : std::uint8_t { text, journald };

/// The least severe level that is logged; each level includes the ones after it.
enum class LogLevel : std::uint8_t { trace, debug, info, warn, error };

/// "text" or "journald" (exact, lower case); false for anything else (`out` unchanged).
[[nodiscard]] bool parse_log_format(std::string_view text, LogFormat& out) noexcept;

/// "trace", "debug", "info", "warn" or "error" (exact, lower case); false for anything else.
[[nodiscard]] bool parse_log_level(std::string_view text, LogLevel& out) noexcept;

[[nodiscard]] std::string_view to_string(LogFormat format) noexcept;
[[nodiscard]] std::string_view to_string(LogLevel level) noexcept;

/// Why `text` was refused, for an error message: `expected text or journald, got "xml"`.
[[nodiscard]] std::string log_format_error(std::string_view text);
/// `expected trace, debug, info, warn or error, got "loud"`.
[[nodiscard]] std::string log_level_error(std::string_view text);

}  // namespace dsekp::edge::logging
