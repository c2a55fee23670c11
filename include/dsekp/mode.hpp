// The two protocols of the paper's comparison: its static-PSK baseline and DSEKP. The one enum
// for every part that tells them apart: devices, the edge's frames and metrics, the log files and
// their analysis.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace dsekp {

enum class Mode : std::uint8_t { psk, dsekp };

inline constexpr std::size_t kModeCount = 2;
inline constexpr std::array<Mode, kModeCount> kModes = {Mode::psk, Mode::dsekp};

/// "psk" or "dsekp": log file names, JSON keys, metric labels, command-line values.
[[nodiscard]] constexpr std::string_view mode_name(Mode mode) noexcept {
  return mode == Mode::psk ? "psk" : "dsekp";
}

/// "PSK" or "DSEKP": reports and figures.
[[nodiscard]] constexpr std::string_view mode_label(Mode mode) noexcept {
  return mode == Mode::psk ? "PSK" : "DSEKP";
}

/// The mode named by mode_name(), or nullopt.
[[nodiscard]] constexpr std::optional<Mode> parse_mode(std::string_view name) noexcept {
  for (const Mode mode : kModes)
    if (name == mode_name(mode)) return mode;
  return std::nullopt;
}

}  // namespace dsekp
