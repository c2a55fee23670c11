// Home Assistant MQTT discovery for the readings the edge republishes (`dsekp edge --republish
// --home-assistant`): for each numeric member of a device's JSON reading (the DHT11's "t" and
// "h"), one retained config on
//   homeassistant/sensor/dsekp_<node>/<key>/config
// that makes Home Assistant create a sensor reading `reading.<key>` from the device's state
// topic (B/<dev_id>, edge/registry/republish_topics.hpp; retained in this mode), available
// while both the edge's and the device's availability topics say "online" (when the edge
// publishes availability), with a unit and device class for
// the keys it knows (t/temp/temperature: °C, h/hum/humidity: %, p/pressure: hPa). <node> is the
// dev_id with '.' as '_' (Home Assistant's node ids are [A-Za-z0-9_-]).
//
// Bounds: a key is 1-32 of [A-Za-z0-9_] (anything else is not announced: it would not be a
// safe topic level or template name), and at most kMaxAnnouncedKeys per device, so a device
// cannot make the edge publish an unbounded number of configs.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dsekp::edge::sinks {

inline constexpr std::size_t kMaxAnnouncedKeys = 16;
inline constexpr const char* kDiscoveryPrefix = "homeassistant";

/// Where a device's sensors read from.
struct SensorTopics {
  std::string state;
  std::vector<std::string> availability;  // all must be "online"; none: always available
};

struct DiscoveryMessage {
  std::string topic;
  std::string json;
};

/// Remembers what was announced and says what is new.
class HomeAssistantDiscovery {
 public:
  /// The configs not announced yet for the numeric members of `reading_json` (a JSON object's
  /// text; anything else yields none), recorded as announced.
  std::vector<DiscoveryMessage> announce(const std::string& dev_id, const SensorTopics& topics,
                                         const std::string& reading_json);

 private:
  std::map<std::string, std::set<std::string>, std::less<>> announced_;  // dev_id -> keys
};

/// One sensor's config (exposed for the tests).
[[nodiscard]] DiscoveryMessage discovery_config(const std::string& dev_id,
                                                const SensorTopics& topics, const std::string& key);

}  // namespace dsekp::edge::sinks
