// MQTT topics and RabbitMQ routing keys: RabbitMQ's MQTT plugin publishes an MQTT message to the
// topic exchange (amq.topic) under its topic with '/' and '.' swapped ("dsekp/data" becomes the
// routing key "dsekp.data"; a '.' inside a level becomes '/'), and delivers to an MQTT
// subscriber what is published there under the swapped key. So the edge, consuming the uplink
// over AMQP, binds its queue with its MQTT filters swapped the same way ('+' becomes '*', '#'
// stays), reads each delivery's topic back from its routing key, and publishes its downlinks
// under their swapped topics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dsekp::edge::amqp {

/// The routing key of an MQTT topic name, and the topic name of a routing key (the same swap).
[[nodiscard]] std::string routing_key_of_topic(std::string_view topic);
[[nodiscard]] std::string topic_of_routing_key(std::string_view routing_key);

/// The binding key of an MQTT topic filter ('+' -> '*', '#' kept, '/' <-> '.').
[[nodiscard]] std::string binding_key_of_filter(std::string_view filter);

struct AmqpNode {
  std::string host;
  std::uint16_t port = 5672;
};

/// "HOST[:PORT][,HOST[:PORT]...]" (an IPv6 address in brackets: "[::1]:5672") -> the nodes; an
/// empty string and a port that is not 1-65535 are errors. False with `error` naming the part.
bool parse_amqp_nodes(std::string_view text, std::vector<AmqpNode>& out, std::string& error);

}  // namespace dsekp::edge::amqp
