// Home Assistant discovery configs (see home_assistant.hpp).
#include "edge/sinks/home_assistant.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace dsekp::edge::sinks {
namespace {

struct KnownSensor {
  const char* device_class;
  const char* unit;
};

const KnownSensor* known(const std::string& key) {
  static const std::map<std::string, KnownSensor> sensors = {{"t", {"temperature", "°C"}},
                                                             {"temp", {"temperature", "°C"}},
                                                             {"temperature", {"temperature", "°C"}},
                                                             {"h", {"humidity", "%"}},
                                                             {"hum", {"humidity", "%"}},
                                                             {"humidity", {"humidity", "%"}},
                                                             {"p", {"pressure", "hPa"}},
                                                             {"pressure", {"pressure", "hPa"}}};
  const auto it = sensors.find(key);
  return it == sensors.end() ? nullptr : &it->second;
}

bool announceable(const std::string& key) {
  return !key.empty() && key.size() <= 32 && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string node_id(std::string dev_id) {
  std::replace(dev_id.begin(), dev_id.end(), '.', '_');
  return "dsekp_" + dev_id;
}

}  // namespace

DiscoveryMessage discovery_config(const std::string& dev_id, const SensorTopics& topics,
                                  const std::string& key) {
  const std::string node = node_id(dev_id);
  nlohmann::json config = {{"name", key},
                           {"unique_id", node + "_" + key},
                           {"object_id", node + "_" + key},
                           {"state_topic", topics.state},
                           {"value_template", "{{ value_json.reading." + key + " }}"},
                           {"state_class", "measurement"},
                           {"device",
                            {{"identifiers", {node}},
                             {"name", dev_id},
                             {"manufacturer", "DSEKP"},
                             {"model", "DSEKP device"}}}};
  if (!topics.availability.empty()) {
    nlohmann::json availability = nlohmann::json::array();
    for (const std::string& t : topics.availability) availability.push_back({{"topic", t}});
    config["availability"] = std::move(availability);
    config["availability_mode"] = "all";
  }
  if (const KnownSensor* s = known(key)) {
    config["device_class"] = s->device_class;
    config["unit_of_measurement"] = s->unit;
  }
  return {std::string(kDiscoveryPrefix) + "/sensor/" + node + "/" + key + "/config", config.dump()};
}

std::vector<DiscoveryMessage> HomeAssistantDiscovery::announce(const std::string& dev_id,
                                                               const SensorTopics& topics,
                                                               const std::string& reading_json) {
  std::vector<DiscoveryMessage> out;
  const nlohmann::json reading = nlohmann::json::parse(reading_json, nullptr, false);
  if (!reading.is_object()) return out;
  std::set<std::string>* keys = nullptr;
  for (const auto& [key, value] : reading.items()) {
    if (!value.is_number() || !announceable(key)) continue;
    if (keys == nullptr) keys = &announced_[dev_id];
    if (keys->count(key) != 0 || keys->size() >= kMaxAnnouncedKeys) continue;
    keys->insert(key);
    out.push_back(discovery_config(dev_id, topics, key));
  }
  return out;
}

}  // namespace dsekp::edge::sinks
