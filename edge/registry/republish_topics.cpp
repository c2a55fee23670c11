// The republish topic layout (see republish_topics.hpp).
#include "republish_topics.hpp"

namespace dsekp::edge {
namespace {

bool starts_with_level(std::string_view topic, std::string_view level) {
  return topic == level || (topic.size() > level.size() && topic.substr(0, level.size()) == level &&
                            topic[level.size()] == '/');
}

}  // namespace

std::string republish_base(std::string_view prefix, std::string_view base) {
  if (base.empty()) return std::string(prefix) + "plain";
  return std::string(base);
}

std::string republish_base_problem(std::string_view prefix, std::string_view base) {
  const std::string b = republish_base(prefix, base);
  if (b.size() > 128) return "the republish topic is longer than 128 characters";
  for (const char c : b) {
    if (c <= ' ' || c > '~') return "the republish topic may hold only printable ASCII, no spaces";
    if (c == '+' || c == '#') return "the republish topic may not hold the wildcards + or #";
    if (c == '%') return "the republish topic may not hold '%'";
  }
  if (b.front() == '$') return "the republish topic may not start with '$' (the broker's own)";
  if (b.front() == '/' || b.back() == '/' || b.find("//") != std::string::npos)
    return "the republish topic may not start or end with '/' or have an empty level";
  const std::string p(prefix);
  if (starts_with_level(b, p + "dsekp") || starts_with_level(b, p + "psk"))
    return "the republish topic may not be under the protocol's own topics (" + p + "dsekp, " + p +
           "psk)";
  if (starts_with_level(b, "homeassistant"))
    return "the republish topic may not be under homeassistant (the discovery topics)";
  return {};
}

std::string RepublishTopics::readings(std::string_view dev_id) const {
  return base_ + "/" + std::string(dev_id);
}

std::string RepublishTopics::device_availability(std::string_view dev_id) const {
  return readings(dev_id) + "/availability";
}

std::string RepublishTopics::edge_availability(std::string_view client_id) const {
  return base_ + "/edge/" + std::string(client_id) + "/availability";
}

}  // namespace dsekp::edge
