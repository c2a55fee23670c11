// How often the edge answers a retransmitted INIT again: at most once per interval per device.
//
// Why: a retransmission (the same INIT bytes as the pending one, PROTOCOL.md 6.2 step 4) is
// answered with the stored ACK without spending the device's INIT budget, so without a limit
// anyone replaying a captured pending INIT makes the edge publish one ACK per replay. A device
// retransmits with exponential backoff from 1 s (first resend after at least 0.5 s with jitter),
// so one answer per 500 ms per device never holds back a genuine retransmission.
//
// In memory only: after a restart a device may get one ACK more. Bounded: at most max_devices
// entries; when full it starts over (each device may then get one answer more).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dsekp::edge {

class AckResendLimiter {
 public:
  static constexpr std::uint64_t kIntervalMs = 500;
  static constexpr std::size_t kMaxDevices = 65536;

  /// Records an ACK sent to `dev_id` at `now_ms` (a new session's, or a resend).
  void sent(std::string_view dev_id, std::uint64_t now_ms) {
    if (last_.size() >= kMaxDevices && last_.find(std::string(dev_id)) == last_.end())
      last_.clear();
    last_[std::string(dev_id)] = now_ms;
  }
  /// Whether an ACK may be sent to `dev_id` again at `now_ms`. A clock that stepped back allows
  /// it (and counts from there).
  [[nodiscard]] bool may_resend(std::string_view dev_id, std::uint64_t now_ms) const {
    const auto it = last_.find(std::string(dev_id));
    return it == last_.end() || now_ms < it->second || now_ms - it->second >= kIntervalMs;
  }

 private:
  std::unordered_map<std::string, std::uint64_t> last_;
};

}  // namespace dsekp::edge
