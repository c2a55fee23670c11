// Log format and level names (see log_options.hpp).
#include "edge/logging/log_options.hpp"

#include <array>
#include <utility>

namespace dsekp::edge::logging {
namespace {

constexpr std::array<std::pair<std::string_view, LogFormat>, 2> kFormats{{
    {"text", LogFormat::text},
    {"journald", LogFormat::journald},
}};

constexpr std::array<std::pair<std::string_view, LogLevel>, 5> kLevels{{
    {"trace", LogLevel::trace},
    {"debug", LogLevel::debug},
    {"info", LogLevel::info},
    {"warn", LogLevel::warn},
    {"error", LogLevel::error},
}};

template <typename Table, typename Value>
bool lookup(const Table& table, std::string_view text, Value& out) noexcept {
  for (const auto& [name, value] : table) {
    if (name == text) {
      out = value;
      return true;
    }
  }
  return false;
}

template <typename Table, typename Value>
std::string_view name_of(const Table& table, Value value) noexcept {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  return "?";
}

// The refused value is quoted as given, cut short: it may come from anywhere.
std::string refused(std::string_view expected, std::string_view text) {
  return "expected " + std::string(expected) + ", got \"" + std::string(text.substr(0, 64)) + "\"";
}

}  // namespace

bool parse_log_format(std::string_view text, LogFormat& out) noexcept {
  return lookup(kFormats, text, out);
}

bool parse_log_level(std::string_view text, LogLevel& out) noexcept {
  return lookup(kLevels, text, out);
}

std::string_view to_string(LogFormat format) noexcept {
  return name_of(kFormats, format);
}

std::string_view to_string(LogLevel level) noexcept {
  return name_of(kLevels, level);
}

std::string log_format_error(std::string_view text) {
  return refused("text or journald", text);
}

std::string log_level_error(std::string_view text) {
  return refused("trace, debug, info, warn or error", text);
}

}  // namespace dsekp::edge::logging
