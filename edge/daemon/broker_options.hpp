// How the edge meets the broker, from its options: address, MQTT version, TLS, the login (the
// registry's edge account when none is given), its availability topic, the batch limits, and
// the subscriptions (through a shared group or not) with those a persistent session may still
// hold from an earlier run of the same client id.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "edge/daemon/edge_daemon.hpp"
#include "edge/mqtt/mqtt_options.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/republish_topics.hpp"
#include "edge/transport/transport.hpp"

namespace dsekp::edge::daemon {

/// Throws std::runtime_error naming the option at fault. `republished`: the republish topics
/// (with --republish), whose edge availability topic becomes the client's will.
[[nodiscard]] mqtt::MqttOptions broker_options(const EdgeDaemonOptions& o, DeviceRegistry& registry,
                                               const std::optional<RepublishTopics>& republished);

/// The MQTT client `name` (--mqtt-client: "libmosquitto" or "builtin") for `options`; throws
/// std::runtime_error for another name.
[[nodiscard]] std::unique_ptr<transport::Transport> make_mqtt_client(const std::string& name,
                                                                     mqtt::MqttOptions options);

/// The edge's transport: with --amqp the AMQP consumer (edge/amqp/, on the login, topics and
/// batch limits of `options`), else the MQTT client --mqtt-client names ("libmosquitto" or
/// "builtin"). Throws std::runtime_error naming the option at fault.
[[nodiscard]] std::unique_ptr<transport::Transport> make_transport(const EdgeDaemonOptions& o,
                                                                   mqtt::MqttOptions options);

}  // namespace dsekp::edge::daemon
