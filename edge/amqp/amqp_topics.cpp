// MQTT topics and AMQP routing keys (see amqp_topics.hpp).
#include "edge/amqp/amqp_topics.hpp"

#include <charconv>

namespace dsekp::edge::amqp {
namespace {

char swapped(char c) noexcept {
  if (c == '/') return '.';
  if (c == '.') return '/';
  return c;
}

bool parse_node(std::string_view part, AmqpNode& node, std::string& error) {
  std::string_view host = part;
  std::string_view port;
  if (!part.empty() && part.front() == '[') {
    const std::size_t close = part.find(']');
    if (close == std::string_view::npos) {
      error = "an IPv6 address without its closing ']': \"" + std::string(part) + "\"";
      return false;
    }
    host = part.substr(1, close - 1);
    const std::string_view rest = part.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      error = "expected ':PORT' after \"" + std::string(part.substr(0, close + 1)) + "\"";
      return false;
    }
    if (!rest.empty()) port = rest.substr(1);
  } else if (const std::size_t colon = part.rfind(':'); colon != std::string_view::npos) {
    host = part.substr(0, colon);
    port = part.substr(colon + 1);
  }
  if (host.empty()) {
    error = "a node without a host: \"" + std::string(part) + "\"";
    return false;
  }
  node.host = std::string(host);
  node.port = 5672;
  if (port.data() != nullptr) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      error = "not a port (1-65535): \"" + std::string(port) + "\"";
      return false;
    }
    node.port = static_cast<std::uint16_t>(value);
  }
  return true;
}

}  // namespace

std::string routing_key_of_topic(std::string_view topic) {
  std::string key(topic);
  for (char& c : key) c = swapped(c);
  return key;
}

std::string topic_of_routing_key(std::string_view routing_key) {
  return routing_key_of_topic(routing_key);
}

std::string binding_key_of_filter(std::string_view filter) {
  std::string key = routing_key_of_topic(filter);
  for (char& c : key)
    if (c == '+') c = '*';
  return key;
}

bool parse_amqp_nodes(std::string_view text, std::vector<AmqpNode>& out, std::string& error) {
  out.clear();
  if (text.empty()) {
    error = "no node given";
    return false;
  }
  while (true) {
    const std::size_t comma = text.find(',');
    AmqpNode node;
    if (!parse_node(text.substr(0, comma), node, error)) return false;
    out.push_back(std::move(node));
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace dsekp::edge::amqp
