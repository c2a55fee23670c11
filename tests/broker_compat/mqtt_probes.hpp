// Probes of the MQTT features DSEKP uses or might use, run the same way against any broker on a
// loopback port: each drives plain libmosquitto clients (ProbeClient, MqttTestClient) and returns
// what it observed, and the NATS and Mosquitto suites assert their own broker's behaviour on it.
// Every wait inside is bounded (ProbeClient/MqttTestClient timeouts).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace dsekp::broker_compat {

/// The CONNACK code an MQTT 5 client gets (libmosquitto's view), nullopt if none came.
std::optional<int> probe_mqtt5_connect(int port);

struct QosObservation {
  std::optional<int> granted;  ///< SUBACK for a subscription at the probed QoS
  bool publish_completed = false;
  bool publisher_closed = false;  ///< the broker closed the publisher's connection
  std::size_t delivered = 0;
  int delivered_qos = -1;
};
/// Subscribes and publishes one message at `qos`.
QosObservation probe_qos(int port, int qos, const std::string& tag);

struct RetainedObservation {
  bool got_last = false;  ///< a later subscriber got the last retained payload
  bool retain_flag = false;
  std::size_t count = 0;  ///< messages it got (1: only the last)
  bool cleared = false;   ///< after an empty retained message, a new subscriber gets nothing
};
RetainedObservation probe_retained(int port);

struct PersistentObservation {
  bool session_present = false;      ///< on the reconnect with clean_session = false
  std::size_t queued_delivered = 0;  ///< of the 10 QoS 1 messages published while away
  bool in_order = false;
};
PersistentObservation probe_persistent_session(int port);

struct SharedObservation {
  std::optional<int> granted_a, granted_b;
  std::size_t plain = 0;     ///< of 20 on dsekp/data, to an ordinary subscriber
  std::size_t a = 0, b = 0;  ///< of the 20, to each member of $share/g/dsekp/data
  bool literal_to_a = false, literal_to_b = false;  ///< a publish on "$share/g/dsekp/data"
};
SharedObservation probe_shared_subscription(int port);

struct TopicObservation {
  std::optional<int> granted;
  bool publish_completed = false;
  bool publisher_closed = false;
  std::optional<std::string> delivered_topic;
};
/// `round` keeps the client ids distinct between calls.
TopicObservation probe_topic(int port, const std::string& topic, int round);

/// The size of the message delivered for a QoS 1 publish of `size` bytes (nullopt: none).
std::optional<std::size_t> probe_payload(int port, std::size_t size, int round);

}  // namespace dsekp::broker_compat
