// How the edge meets the broker, from its options: address, MQTT version, TLS, the login (the
// registry's edge account when none is given), its availability topic, the batch limits, and
// the subscriptions (through a shared group or not) with those a persistent session may still
// hold from an earlier run of the same client id.
#pragma once

#include <optional>

#include "edge/daemon/edge_daemon.hpp"
#include "edge/mqtt/mqtt_options.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/republish_topics.hpp"

namespace dsekp::edge::daemon {

/// Throws std::runtime_error naming the option at fault. `republished`: the republish topics
/// (with --republish), whose edge availability topic becomes the client's will.
[[nodiscard]] mqtt::MqttOptions broker_options(const EdgeDaemonOptions& o, DeviceRegistry& registry,
                                               const std::optional<RepublishTopics>& republished);

}  // namespace dsekp::edge::daemon
