// What each kind of broker account may publish and subscribe to: the one definition behind both
// ways DSEKP secures a broker, the ACL file of `dsekp keys broker-config` (broker_config.hpp)
// and the roles of Mosquitto's dynamic-security plugin (edge/broker_admin/dynsec_plan.hpp).
//
// P is the deployment's topic prefix (`dsekp edge --prefix`):
//   edge      reads P dsekp/init, P dsekp/data, P dsekp/init/+, P dsekp/data/+ (and P psk/data
//             with the PSK baseline); writes P dsekp/init/ack/+, P dsekp/down/+, P dsekp/rekey/+
//             (every device's ACK, downlink and REKEY request) and B/# (readings and
//             availability republished with `dsekp edge --republish`, B = P plain unless the
//             deployment sets another: republish_topics.hpp); reads P dsekp/admin/downlink,
//             writes P dsekp/admin/result/+.
//   reader    reads B/#: the only accounts that may read republished plaintext.
//   downlink  writes P dsekp/admin/downlink, reads P dsekp/admin/result/+ (`dsekp edge send`;
//             the edge also checks each request's own authentication).
//   device    (user name = dev_id) writes P dsekp/init/<dev_id> and P dsekp/data/<dev_id> (the
//             per-device uplink topics, the default) or, for a registry on the shared topics,
//             P dsekp/init and P dsekp/data (and P psk/data with the baseline); reads only
//             P dsekp/init/ack/<dev_id>, P dsekp/down/<dev_id> and P dsekp/rekey/<dev_id>.
// With Home Assistant discovery (`dsekp edge --home-assistant`) the edge also writes
// homeassistant/sensor/+/+/config and readers read homeassistant/# (the discovery configs; no
// reading is in them).
// Hence a device cannot read another device's ACKs or anyone's uplink traffic, and cannot
// publish an ACK or a downlink (which would let it jam or probe another device).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "device_registry.hpp"
#include "uplink_topics.hpp"

namespace dsekp::edge {

enum class TopicAccess : std::uint8_t {
  read,   // subscribe to the filter and receive what matches it
  write,  // publish on topics matching the filter
};

struct TopicGrant {
  TopicAccess access = TopicAccess::read;
  std::string filter;  // an MQTT topic filter, prefix included

  friend bool operator==(const TopicGrant&, const TopicGrant&) = default;
};

/// The deployment facts the grants depend on.
struct GrantScope {
  std::string topic_prefix;   // P above: "" or e.g. "site1/"
  bool psk_baseline = false;  // the paper's psk/data topic (the comparison experiment)
  UplinkTopics uplink_topics = UplinkTopics::per_device;
  bool home_assistant = false;  // the discovery topics (see above)
  std::string republish_topic;  // B above as configured; "": P plain
};

/// The grants of an account that is not a device.
[[nodiscard]] std::vector<TopicGrant> account_grants(AccountRole role, const GrantScope& scope);
/// The grants of the device `dev_id`.
[[nodiscard]] std::vector<TopicGrant> device_grants(std::string_view dev_id,
                                                    const GrantScope& scope);

}  // namespace dsekp::edge
