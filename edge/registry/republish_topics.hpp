// Where the edge republishes for the tools operators run beside it (`dsekp edge --republish`),
// in Zigbee2MQTT's layout of one topic per device under a base topic B (default {prefix}plain,
// `--republish-topic` sets another):
//   B/<dev_id>                             the device's readings in clear (JSON)
//   B/<dev_id>/availability                "online" / "offline" from the device's last
//                                          accepted frame (retained)
//   B/edge/<client_id>/availability        "online" / "offline" for the edge itself (retained;
//                                          "offline" is also its MQTT will)
// The three shapes have 2, 3 and 4 levels below B, so a subscription to B/+ gets readings only,
// B/+/availability devices' availability only, whatever the dev_ids are. The broker grants
// (broker_grants.hpp) give edges write and readers read on B/#.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace dsekp::edge {

inline constexpr std::string_view kAvailabilityOnline = "online";
inline constexpr std::string_view kAvailabilityOffline = "offline";

/// B for `base` as configured ("" means the default) under the topic prefix `prefix`.
[[nodiscard]] std::string republish_base(std::string_view prefix, std::string_view base);

/// Why `base` cannot be a republish base under `prefix`, or "" if it can: 1-128 printable ASCII
/// characters without spaces, wildcards or '%', not starting with '$' or '/', no empty level, and
/// not the protocol's own topics ({prefix}dsekp/..., {prefix}psk/...) or Home Assistant's.
[[nodiscard]] std::string republish_base_problem(std::string_view prefix, std::string_view base);

class RepublishTopics {
 public:
  /// `base`: B itself (see republish_base()).
  explicit RepublishTopics(std::string base) : base_(std::move(base)) {}

  [[nodiscard]] const std::string& base() const noexcept { return base_; }
  [[nodiscard]] std::string readings(std::string_view dev_id) const;
  [[nodiscard]] std::string device_availability(std::string_view dev_id) const;
  [[nodiscard]] std::string edge_availability(std::string_view client_id) const;
  /// B/#: what the grants cover.
  [[nodiscard]] std::string all() const { return base_ + "/#"; }

 private:
  std::string base_;
};

}  // namespace dsekp::edge
