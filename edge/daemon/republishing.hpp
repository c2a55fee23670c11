// `--republish`: what the edge publishes in clear for Home Assistant, Telegraf and the like
// besides the protocol's own messages (republish_topics.hpp has the topics): every accepted
// reading through the republish sink (a sink like the CSV, so only committed readings go out),
// and each device's availability, online at its first frame and offline once quiet for
// --device-offline-after (a sweep every quarter of that, between 0.1 s and 5 s). Off unless
// asked: the readings leave the edge decrypted.
#pragma once

#include <memory>
#include <string>

#include "edge/daemon/device_activity.hpp"
#include "edge/daemon/edge_daemon.hpp"
#include "edge/daemon/edge_storage.hpp"
#include "edge/daemon/periodic_task.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/republish_topics.hpp"
#include "edge/sinks/republish_sink.hpp"
#include "edge/transport/transport.hpp"

namespace dsekp::edge::daemon {

class Republishing {
 public:
  /// Adds the republish sink to `storage`, has `activity` publish availability through
  /// `transport` and starts the sweep; every registered device is expected online. Each
  /// argument must outlive this object. `edge_availability_topic`: the edge's own (the sink
  /// announces it in the Home Assistant configurations).
  Republishing(const EdgeDaemonOptions& o, const RepublishTopics& topics,
               const std::string& edge_availability_topic, transport::Transport& transport,
               EdgeStorage& storage, DeviceActivity& activity, DeviceRegistry& registry);

 private:
  std::unique_ptr<sinks::RepublishSink> sink_;
  std::unique_ptr<PeriodicTask> availability_sweep_;
};

}  // namespace dsekp::edge::daemon
