// The live line on stderr while a fleet runs (when stderr is a terminal, or forced): devices
// connected, DATA frames sent and acknowledged, errors, the send rate and the time left.
#pragma once

#include <cstdint>

#include "device/fleet_counters.hpp"

namespace dsekp::device {

class ProgressLine {
 public:
  /// `expected_frames` (0 = unknown) and `duration_ms` (0 = none) give the ETA.
  ProgressLine(bool enabled, std::uint64_t devices, std::uint64_t expected_frames,
               std::uint64_t duration_ms) noexcept
      : enabled_(enabled),
        devices_(devices),
        expected_(expected_frames),
        duration_ms_(duration_ms) {}

  /// Redraws the line; call about once a second. `elapsed_ms` since the start of the run.
  void update(const FleetCounters& counters, std::uint64_t connected, std::uint64_t elapsed_ms);
  /// Ends the line (a newline) if one was drawn.
  void finish();

 private:
  bool enabled_;
  std::uint64_t devices_;
  std::uint64_t expected_;
  std::uint64_t duration_ms_;
  bool drawn_ = false;
  std::uint64_t last_sent_ = 0;
  std::uint64_t last_ms_ = 0;
  double rate_ = 0;  // frames/s, smoothed
};

}  // namespace dsekp::device
