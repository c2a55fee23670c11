// Rejections logged at a bounded rate: at most `per_second` lines per reason per second, and
// one summary line of how many were suppressed when the next second starts. A flood of bad frames
// (an attacker, a misconfigured device) must not turn into a flood of log I/O on the edge's one
// message thread. The lines go through the daemon's logger (edge/logging/edge_logger.hpp): a
// rejection at warn (`rejected REASON on "TOPIC": DETAIL`), a message given up after its retries at
// error (`NOT PROCESSED REASON on ...`), the summary at warn; the topic and detail escaped
// (edge/logging/printable.hpp).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "edge/service/handle_result.hpp"

namespace dsekp::edge::daemon {

class RejectionLog {
 public:
  explicit RejectionLog(std::uint32_t per_second = 5) : per_second_(per_second) {}

  /// Changes the limit (SIGHUP); may be called from any thread.
  void set_per_second(std::uint32_t per_second) noexcept { per_second_ = per_second; }

  /// Logs `r` (a result that is not ok) for a message on `topic` received at `now_ms`, unless
  /// its reason already used up this second's lines.
  void log(const HandleResult& r, std::string_view topic, std::uint64_t now_ms);

 private:
  struct Slot {
    std::uint64_t second = 0;
    std::uint32_t lines = 0;
    std::uint64_t suppressed = 0;
  };
  // One slot per protocol Error and per EdgeReason (indexed apart, see log()).
  static constexpr std::size_t kSlots = kErrorCount + kEdgeReasonCount;

  std::atomic<std::uint32_t> per_second_;
  std::array<Slot, kSlots> slots_{};
};

}  // namespace dsekp::edge::daemon
