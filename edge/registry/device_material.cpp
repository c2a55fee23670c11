// Provisioning material as JSON and as a C header (see device_material.hpp).
#include "device_material.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

#include "text_encoding.hpp"

namespace dsekp::edge {
namespace {

bool valid_host(std::string_view host, bool ipv6) {
  if (host.empty() || host.size() > 253) return false;
  for (const char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || (ipv6 && c == ':');
    if (!ok) return false;
  }
  return true;
}

/// "{0x12, 0x34, ...}" wrapped at 8 bytes a line.
std::string c_byte_array(ByteView bytes) {
  std::string out = "{";
  const std::string hex = to_hex(bytes);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out += (i % 8 == 0) ? "\n    " : " ";
    out += "0x";
    out += hex.substr(2 * i, 2);
    if (i + 1 < bytes.size()) out += ",";
  }
  return out + "\n}";
}

std::string topic_ack(std::string_view dev_id) {
  return "dsekp/init/ack/" + std::string(dev_id);
}
std::string topic_down(std::string_view dev_id) {
  return "dsekp/down/" + std::string(dev_id);
}
std::string topic_rekey(std::string_view dev_id) {
  return "dsekp/rekey/" + std::string(dev_id);
}

}  // namespace

RegistryStatus parse_broker_address(std::string_view text, BrokerAddress& out) {
  const RegistryStatus bad{RegistryErrc::invalid_argument,
                           "invalid broker address \"" + std::string(text.substr(0, 80)) +
                               "\": expected HOST:PORT or [IPV6]:PORT"};
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad;
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  bool ipv6 = false;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    ipv6 = true;
  }
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
      port > 65535 || !valid_host(host, ipv6))
    return bad;
  out.host = std::string(host);
  out.port = static_cast<std::uint16_t>(port);
  return {};
}

std::string material_json(const DeviceMaterial& material, const BrokerAddress& broker,
                          MaterialMode mode) {
  const DeviceCredentials& c = material.credentials;
  const std::string dev_id(c.dev_id.str());
  const bool psk = mode == MaterialMode::with_psk_baseline;
  nlohmann::ordered_json out = {{"dev_id", dev_id},
                                {"generation", c.generation},
                                {"dev_secret_hex", to_hex(c.dev_secret.view())},
                                {"edge_salt_hex", to_hex(material.edge_salt.view())}};
  // The device must store every next secret (PROTOCOL.md 6.6); absent for a v1 device.
  if (c.ratchet) out["ratchet"] = true;
  if (psk) out["psk_key_hex"] = to_hex(c.psk_key.view());
  out["broker"] = {{"host", broker.host},
                   {"port", broker.port},
                   {"username", material.broker_username},
                   {"password", material.broker_password}};
  const std::string& p = material.topic_prefix;
  out["topics"] = {{"init", p + device_init_topic(material.uplink_topics, dev_id)},
                   {"ack", p + topic_ack(dev_id)},
                   {"data", p + device_data_topic(material.uplink_topics, dev_id)},
                   {"down", p + topic_down(dev_id)},
                   {"rekey", p + topic_rekey(dev_id)}};
  if (psk) out["topics"]["psk"] = p + "psk/data";
  return out.dump(2) + "\n";
}

std::string material_c_header(const DeviceMaterial& material, const BrokerAddress& broker,
                              MaterialMode mode) {
  const bool psk = mode == MaterialMode::with_psk_baseline;
  const DeviceCredentials& c = material.credentials;
  const std::string dev_id(c.dev_id.str());
  // Every string below is from a validated alphabet (dev_id, host, hex, the topic prefix:
  // topic_prefix.hpp): no escaping needed.
  // The topic macros are DSEKP_TOPIC_NAME_*: DSEKP_TOPIC_* are the SDK's dsekp_topic values, and
  // a sketch includes both headers.
  std::string h;
  h += "/* DSEKP device provisioning for \"" + dev_id + "\" (generation " +
       std::to_string(c.generation) + "), written by `dsekp keys`.\n";
  h += " * SECRET: anyone holding this file can impersonate the device. Keep it out of version\n";
  h += " * control; flash it and delete it. */\n";
  h += "#ifndef DSEKP_DEVICE_CONFIG_H\n#define DSEKP_DEVICE_CONFIG_H\n\n#include <stdint.h>\n\n";
  h += "#define DSEKP_DEV_ID \"" + dev_id + "\"\n";
  h += "#define DSEKP_REGISTRY_GENERATION " + std::to_string(c.generation) + "u\n";
  h += "#define DSEKP_BROKER_HOST \"" + broker.host + "\"\n";
  h += "#define DSEKP_BROKER_PORT " + std::to_string(broker.port) + "\n";
  h += "#define DSEKP_BROKER_USERNAME \"" + material.broker_username + "\"\n";
  h += "#define DSEKP_BROKER_PASSWORD \"" + material.broker_password + "\"\n";
  // For dsekp_device_params.topic_prefix: the SDK puts it in front of every topic.
  const std::string& p = material.topic_prefix;
  h += "#define DSEKP_TOPIC_PREFIX \"" + p + "\"\n";
  h += "#define DSEKP_TOPIC_NAME_INIT \"" + p + device_init_topic(material.uplink_topics, dev_id) +
       "\"\n";
  h += "#define DSEKP_TOPIC_NAME_ACK \"" + p + topic_ack(dev_id) + "\"\n";
  h += "#define DSEKP_TOPIC_NAME_DATA \"" + p + device_data_topic(material.uplink_topics, dev_id) +
       "\"\n";
  // For dsekp_device_params.per_device_topics: the SDK then publishes on the topics above.
  h += std::string("#define DSEKP_PER_DEVICE_TOPICS ") +
       (material.uplink_topics == UplinkTopics::per_device ? "1" : "0") + "\n";
  // Ratchet mode (PROTOCOL.md 6.6): the firmware sets up a dsekp_ratchet with its store and
  // boots from the stored pair; DSEKP_DEV_SECRET is only what it stores at its first boot.
  h += std::string("#define DSEKP_RATCHET ") + (c.ratchet ? "1" : "0") + "\n";
  h += "#define DSEKP_TOPIC_NAME_DOWN \"" + p + topic_down(dev_id) + "\"\n";
  h += "#define DSEKP_TOPIC_NAME_REKEY \"" + p + topic_rekey(dev_id) + "\"\n";
  if (psk) h += "#define DSEKP_TOPIC_NAME_PSK \"" + p + "psk/data\"\n";
  h += "\n";
  h += "static const uint8_t DSEKP_DEV_SECRET[" + std::to_string(c.dev_secret.size()) +
       "] = " + c_byte_array(c.dev_secret.view()) + ";\n";
  const ByteView salt = material.edge_salt.view();
  h += "static const uint8_t DSEKP_EDGE_SALT[" + std::to_string(salt.size()) +
       "] = " + c_byte_array(salt) + ";\n";
  if (psk)
    h += "static const uint8_t DSEKP_PSK_KEY[" + std::to_string(c.psk_key.size()) +
         "] = " + c_byte_array(c.psk_key.view()) + ";\n";
  h += "\n";
  h += "#endif /* DSEKP_DEVICE_CONFIG_H */\n";
  return h;
}

}  // namespace dsekp::edge
