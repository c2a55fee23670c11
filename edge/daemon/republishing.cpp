// Republishing (see republishing.hpp).
#include "edge/daemon/republishing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "edge/daemon/unix_clock.hpp"
#include "edge/registry/text_encoding.hpp"

namespace dsekp::edge::daemon {

Republishing::Republishing(const EdgeDaemonOptions& o, const RepublishTopics& topics,
                           const std::string& edge_availability_topic,
                           transport::Transport& transport, EdgeStorage& storage,
                           DeviceActivity& activity, DeviceRegistry& registry) {
  const bool retain = o.republish_retain || o.home_assistant;
  sink_ = std::make_unique<sinks::RepublishSink>(
      sinks::RepublishOptions{topics, retain, o.home_assistant, edge_availability_topic},
      [&transport](const std::string& topic, const std::string& json, bool retain_this) {
        transport.publish(topic, bytes_of(json), 1, retain_this);
      });
  storage.add_sink(*sink_);
  activity.publish_availability(
      std::uint64_t{o.device_offline_after_s} * 1000,
      [&transport, topics, retain](const std::string& dev_id, std::string_view payload) {
        if (payload.empty() && !retain) return;  // nothing retained to clear
        transport.publish(topics.device_availability(dev_id), bytes_of(payload), 1, retain);
      });
  std::vector<DeviceInfo> devices;
  if (const RegistryStatus s = registry.list(devices); !s.ok())
    throw std::runtime_error("registry " + o.registry_db + ": " + s.message());
  std::vector<std::string> dev_ids;
  for (const DeviceInfo& d : devices) dev_ids.push_back(d.dev_id);
  activity.expect(dev_ids, unix_ms_now());
  const auto period = std::chrono::milliseconds(
      std::clamp<std::uint64_t>(std::uint64_t{o.device_offline_after_s} * 250, 100, 5000));
  availability_sweep_ =
      std::make_unique<PeriodicTask>(period, [&activity] { activity.sweep(unix_ms_now()); });
}

}  // namespace dsekp::edge::daemon
