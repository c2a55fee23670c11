// Which topics a deployment's devices publish their uplink frames on (PROTOCOL.md section 2):
//   per-device  {prefix}dsekp/init/{dev_id} and {prefix}dsekp/data/{dev_id}: the broker's ACL lets
//               each device account publish only under its own name (pattern `%u`), and the edge
//               refuses a frame whose dev_id is not the topic's, so one device account cannot
//               speak for another (send INITs, DATA or replays in its name). The default of a new
//               registry.
//   shared      the paper's {prefix}dsekp/init and {prefix}dsekp/data, on which every device
//               publishes: any device account can publish frames naming any dev_id (they still
//               have to authenticate). Kept for the paper's experiment and for registries made
//               before per-device topics existed (their devices publish there).
// The edge accepts both forms always; the registry's setting decides what the generated ACL
// grants and what provisioning material tells devices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dsekp::edge {

enum class UplinkTopics : std::uint8_t { shared, per_device };

/// "shared" or "per-device" (also the registry's stored value and the CLI's word).
[[nodiscard]] inline const char* uplink_topics_name(UplinkTopics t) noexcept {
  return t == UplinkTopics::per_device ? "per-device" : "shared";
}
[[nodiscard]] inline std::optional<UplinkTopics> parse_uplink_topics(std::string_view text) {
  if (text == "per-device") return UplinkTopics::per_device;
  if (text == "shared") return UplinkTopics::shared;
  return std::nullopt;
}

/// A device's INIT and DATA topics (without the deployment's prefix).
[[nodiscard]] inline std::string device_init_topic(UplinkTopics t, std::string_view dev_id) {
  return t == UplinkTopics::per_device ? "dsekp/init/" + std::string(dev_id) : "dsekp/init";
}
[[nodiscard]] inline std::string device_data_topic(UplinkTopics t, std::string_view dev_id) {
  return t == UplinkTopics::per_device ? "dsekp/data/" + std::string(dev_id) : "dsekp/data";
}

}  // namespace dsekp::edge
