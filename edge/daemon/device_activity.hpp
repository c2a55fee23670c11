// Which devices went silent, for an alert that needs no series per device: the edge remembers
// when each device's last accepted frame arrived and, at every scrape, reports
//   dsekp_devices_seen                 devices with an accepted frame since the edge started
//   dsekp_devices_silent{over}         of those, the ones with none for over 5m, 1h or 24h
// A device removed from the registry is forgotten at the next scrape (the registry is asked
// about the silent ones only), so removing a device does not fire a "device silent" alert.
// Devices that never sent since the edge started are not counted: the edge cannot tell a
// device that is off from one that was never installed.
//
// Threads: seen() on the loop thread, counts() on the scraping thread; one mutex.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dsekp::edge {

struct SilenceThreshold {
  const char* label;  // the `over` label value
  std::uint64_t ms;
};
inline constexpr std::array<SilenceThreshold, 3> kSilenceThresholds = {
    {{"5m", 300'000}, {"1h", 3'600'000}, {"24h", 86'400'000}}};

class DeviceActivity {
 public:
  /// `registered(dev_id)`: whether the registry still has the device (false forgets it).
  explicit DeviceActivity(std::function<bool(const std::string&)> registered);

  /// An accepted frame of `dev_id` at `now_ms`.
  void seen(std::string_view dev_id, std::uint64_t now_ms);

  struct Counts {
    std::size_t seen = 0;
    std::array<std::size_t, kSilenceThresholds.size()> silent{};
  };
  [[nodiscard]] Counts counts(std::uint64_t now_ms);

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::function<bool(const std::string&)> registered_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::uint64_t, Hash, std::equal_to<>> last_seen_ms_;
};

}  // namespace dsekp::edge
