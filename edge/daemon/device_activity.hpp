// What the edge knows of each device's activity: when its last accepted frame arrived. Two
// uses, neither needing a series per device:
//   * metrics, at every scrape:
//       dsekp_devices_seen                 devices with an accepted frame since the edge started
//       dsekp_devices_silent{over}         of those, the ones with none for over 5m, 1h or 24h
//     Devices that never sent since the edge started are not counted: the edge cannot tell a
//     device that is off from one that was never installed.
//   * availability (with `dsekp edge --republish`, optional): "online" on the device's
//     availability topic (edge/registry/republish_topics.hpp) at its first accepted frame after
//     it was offline or unknown, "offline" once it has sent nothing for offline_after_ms. The
//     devices the registry holds at start-up are expected: one that sends nothing within
//     offline_after_ms of the start is published offline, so an "online" retained by the broker
//     from an earlier run does not outlive the device.
// A device removed from the registry is forgotten (the registry is asked about the quiet ones
// only, so removing a device does not fire a "device silent" alert); its retained availability
// is cleared (an empty retained message).
//
// Threads: seen() on the loop thread, counts() on the scraping thread, sweep() on a timer
// thread; one mutex, under which availability is also published (so its messages leave in the
// order of the transitions).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "edge/string_map.hpp"

namespace dsekp::edge {

struct SilenceThreshold {
  const char* label;  // the `over` label value
  std::uint64_t ms;
};
inline constexpr std::array<SilenceThreshold, 3> kSilenceThresholds = {
    {{"5m", 300'000}, {"1h", 3'600'000}, {"24h", 86'400'000}}};

/// Publishing a device's availability: `payload` "online", "offline", or "" (clear it).
using AvailabilityFn = std::function<void(const std::string& dev_id, std::string_view payload)>;

class DeviceActivity {
 public:
  /// `registered(dev_id)`: whether the registry still has the device (false forgets it).
  explicit DeviceActivity(std::function<bool(const std::string&)> registered);

  /// Turns availability on (before any other call). offline_after_ms > 0.
  void publish_availability(std::uint64_t offline_after_ms, AvailabilityFn publish);
  /// The devices the registry holds at start-up (`now_ms`): offline after offline_after_ms
  /// unless they send (availability only; they do not count as seen).
  void expect(const std::vector<std::string>& dev_ids, std::uint64_t now_ms);

  /// An accepted frame of `dev_id` at `now_ms`.
  void seen(std::string_view dev_id, std::uint64_t now_ms);

  /// Whether `dev_id` had an accepted frame within `within_ms` of `now_ms`.
  [[nodiscard]] bool online(std::string_view dev_id, std::uint64_t now_ms, std::uint64_t within_ms);

  /// Publishes "offline" for the devices quiet for longer than offline_after_ms.
  void sweep(std::uint64_t now_ms);

  struct Counts {
    std::size_t seen = 0;
    std::array<std::size_t, kSilenceThresholds.size()> silent{};
  };
  [[nodiscard]] Counts counts(std::uint64_t now_ms);

 private:
  enum class Availability : std::uint8_t { unknown, online, offline };
  struct Device {
    std::uint64_t last_ms = 0;  // the last accepted frame, or the start for an expected one
    bool seen = false;          // an accepted frame since the edge started
    Availability availability = Availability::unknown;
  };
  using Map = StringMap<Device>;
  /// Erases the device, clearing its retained availability if any was published.
  Map::iterator forget(Map::iterator it);

  std::function<bool(const std::string&)> registered_;
  std::uint64_t offline_after_ms_ = 0;  // 0: no availability
  AvailabilityFn publish_;
  std::mutex mutex_;
  Map devices_;
};

}  // namespace dsekp::edge
