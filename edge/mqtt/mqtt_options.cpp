// The MQTT options' helpers (see mqtt_options.hpp).
#include "edge/mqtt/mqtt_options.hpp"

#include <algorithm>

namespace dsekp::edge::mqtt {

bool parse_mqtt_version(std::string_view text, MqttVersion& out) noexcept {
  if (text == "auto") {
    out = MqttVersion::automatic;
  } else if (text == "5") {
    out = MqttVersion::v5;
  } else if (text == "3.1.1" || text == "311") {
    out = MqttVersion::v311;
  } else {
    return false;
  }
  return true;
}

// MQTT 5 Receive Maximum: how many QoS 1 messages the broker sends before it waits for our
// PUBACKs. libmosquitto's default (20, sent in every CONNECT: lib/send_connect.c) would cap a
// batch at 20 and then stall the pipe for a round trip after each; twice batch_max lets the
// broker keep sending while a batch commits. (MQTT 3.1.1: the broker's max_inflight_messages
// setting plays this role.)
std::uint16_t receive_maximum_for(std::size_t batch_max) noexcept {
  return static_cast<std::uint16_t>(std::clamp<std::size_t>(2 * batch_max, 20, 65535));
}

}  // namespace dsekp::edge::mqtt
