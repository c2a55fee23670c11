// At most one reply of a kind per interval per device: what keeps a replayed or forged frame
// from turning the edge into an amplifier that publishes on every copy it receives.
//
// Two uses in EdgeService, each with its own instance and interval:
//  * ACK resends (500 ms): a retransmitted INIT (the same bytes as the pending one, PROTOCOL.md
//    6.2 step 4) is answered with the stored ACK without spending the device's INIT budget. A
//    device retransmits with exponential backoff from 1 s (the first resend at least 0.5 s after
//    the INIT, with jitter), so one answer per 500 ms never holds back a genuine retransmission.
//  * REKEY requests (10 s): a DATA frame under a session the edge does not hold is answered with
//    a request to rekey (6.3 step 1), and anyone can publish such a frame. A device rekeys on
//    the first request, so one per 10 s only bounds how soon a lost request is repeated.
//
// In memory only: after a restart a device may get one reply more. Bounded: at most
// kMaxDevices entries; when full, the entries whose interval is over go first (they limit
// nothing any more), and only if every entry is still running does it start over (each device
// may then get one reply more).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dsekp::edge {

class DeviceIntervalLimiter {
 public:
  static constexpr std::size_t kMaxDevices = 65536;

  explicit DeviceIntervalLimiter(std::uint64_t interval_ms) noexcept : interval_ms_(interval_ms) {}

  /// Records a reply sent to `dev_id` at `now_ms`.
  void sent(std::string_view dev_id, std::uint64_t now_ms) {
    if (last_.size() >= kMaxDevices && last_.find(std::string(dev_id)) == last_.end()) {
      std::erase_if(last_, [&](const auto& entry) { return may_send_at(entry.second, now_ms); });
      if (last_.size() >= kMaxDevices) last_.clear();
    }
    last_[std::string(dev_id)] = now_ms;
  }
  /// Whether a reply may go to `dev_id` at `now_ms`. A clock that stepped back allows it (and
  /// counts from there).
  [[nodiscard]] bool may_send(std::string_view dev_id, std::uint64_t now_ms) const {
    const auto it = last_.find(std::string(dev_id));
    return it == last_.end() || may_send_at(it->second, now_ms);
  }

 private:
  [[nodiscard]] bool may_send_at(std::uint64_t last_ms, std::uint64_t now_ms) const noexcept {
    return now_ms < last_ms || now_ms - last_ms >= interval_ms_;
  }

  std::uint64_t interval_ms_;
  std::unordered_map<std::string, std::uint64_t> last_;
};

}  // namespace dsekp::edge
