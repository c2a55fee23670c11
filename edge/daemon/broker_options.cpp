// broker_options (see broker_options.hpp).
#include "edge/daemon/broker_options.hpp"

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "edge/admin/admin_protocol.hpp"
#include "edge/amqp/amqp_transport.hpp"
#include "edge/daemon/secret_option.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/mqtt/mqtt_client.hpp"
#include "edge/mqtt/mqtt_limits.hpp"
#include "edge/mqtt_builtin/builtin_mqtt_client.hpp"
#include "edge/service/edge_topics.hpp"
#include "edge/service/message_batch.hpp"

namespace dsekp::edge::daemon {
namespace {

// "$share/GROUP/" for --shared-group, "" without. The group is one topic level: no '/', and no
// wildcard (MQTT 5 4.8.2: a ShareName must not contain "/", "+" or "#").
std::string shared_subscription_prefix(const EdgeDaemonOptions& o) {
  if (o.shared_group.empty()) return {};
  if (o.shared_group.find_first_of("/+#") != std::string::npos)
    throw std::runtime_error("--shared-group: a group name may not contain '/', '+' or '#'");
  if (o.mqtt_version == "3.1.1" || o.mqtt_version == "311")
    throw std::runtime_error(
        "--shared-group needs MQTT 5 shared subscriptions; it cannot be used with "
        "--mqtt-version 3.1.1");
  return "$share/" + o.shared_group + "/";
}

// The broker login: --username with --password (or --password-file); --username alone takes
// that account's password from the registry (`dsekp keys account add NAME --role edge`);
// nothing at all, the registry's default edge account, else anonymous.
void resolve_broker_login(const EdgeDaemonOptions& o, DeviceRegistry& registry,
                          mqtt::MqttOptions& out) {
  std::string password = o.password;
  if (!o.password_file.empty()) password = read_secret_option(o.password_file, "--password-file");
  if (o.username) {
    out.username = *o.username;
    out.password = password;
    if (password.empty()) {
      if (ServiceAccount account; registry.account(*o.username, account).ok())
        out.password = account.login.password;
    }
  } else if (BrokerAccount account; registry.edge_broker_account(account).ok()) {
    out.username = account.username;
    out.password = account.password;
  }
}

// --amqp: the nodes, and what the MQTT options say that AMQP carries too (the login, the
// topics, the batch limits). What only MQTT can carry is refused by name.
amqp::AmqpOptions amqp_options(const EdgeDaemonOptions& o, const mqtt::MqttOptions& mqtt) {
  amqp::AmqpOptions out;
  std::string error;
  if (!amqp::parse_amqp_nodes(o.amqp_nodes, out.nodes, error))
    throw std::runtime_error("--amqp: " + error);
  if (o.amqp_queue.empty() || o.amqp_queue.size() > 255)
    throw std::runtime_error("--amqp-queue: a queue name of 1 to 255 bytes");
  if (!o.shared_group.empty())
    throw std::runtime_error(
        "--shared-group is MQTT's way to share the uplink; with --amqp the edges that consume "
        "one --amqp-queue share it");
  if (mqtt.tls.requested())
    throw std::runtime_error("--amqp: no TLS to RabbitMQ yet (--tls-ca, --tls-cert, --tls-key)");
  if (o.republish_retain || o.home_assistant)
    throw std::runtime_error(
        "--amqp cannot publish retained messages (--republish-retain, --home-assistant): "
        "RabbitMQ keeps those in its MQTT plugin only");
  if (o.batch_wait_ms > 0) logging::logger().warn("--batch-wait-ms has no effect with --amqp");
  // A quorum queue hands a hung node's deliveries back late, after the device's later frames.
  if (o.replay_window < ReplayWindow::kMaxSize)
    logging::logger().warn(
        "--amqp with --replay-window {}: frames redelivered late after a hung broker node are "
        "refused as too_old once a device has sent {} newer ones (docs/SCALING.md)",
        o.replay_window, o.replay_window);
  if (!mqtt.availability.topic.empty())
    logging::logger().warn("--amqp: the edge's availability ({}) is not published (no MQTT will)",
                           mqtt.availability.topic);
  // RabbitMQ has no anonymous AMQP login: an account is named, not guessed (guest works on
  // loopback only, and should not be what an edge runs as).
  if (mqtt.username.empty())
    throw std::runtime_error(
        "--amqp needs a login: --username with --password (or --password-file), or the "
        "registry's edge account");
  out.username = mqtt.username;
  out.password = mqtt.password;
  for (const amqp::AmqpNode& node : out.nodes)
    if (node.host != "127.0.0.1" && node.host != "::1" && node.host != "localhost")
      logging::logger().warn(
          "--amqp: the login to {} crosses the network in clear (no TLS to RabbitMQ yet): keep "
          "it on a private network",
          node.host);
  if (o.mqtt_client != EdgeDaemonOptions{}.mqtt_client || o.mqtt_version != "auto" ||
      o.allow_unverified_libmosquitto)
    logging::logger().warn(
        "--amqp: --mqtt-client, --mqtt-version and --allow-unverified-libmosquitto have no effect");
  out.queue = o.amqp_queue;
  out.subscriptions = mqtt.subscriptions;
  out.stale_subscriptions = mqtt.stale_subscriptions;
  out.batch_max = mqtt.batch_max;
  out.batch_time = mqtt.batch_time;
  out.fatal = mqtt.fatal;
  return out;
}

}  // namespace

mqtt::MqttOptions broker_options(const EdgeDaemonOptions& o, DeviceRegistry& registry,
                                 const std::optional<RepublishTopics>& republished) {
  mqtt::MqttOptions mqtt_options;
  mqtt_options.host = o.broker_host;
  mqtt_options.port = o.broker_port;
  mqtt_options.client_id = o.client_id;
  if (!mqtt::parse_mqtt_version(o.mqtt_version, mqtt_options.version))
    throw std::runtime_error("--mqtt-version: expected 5, 3.1.1 or auto, got \"" + o.mqtt_version +
                             "\"");
  mqtt_options.tls = {o.tls_ca, o.tls_cert, o.tls_key, o.tls_insecure};
  if (o.mqtt_client == "builtin" &&
      (mqtt_options.tls.requested() || mqtt_options.version == mqtt::MqttVersion::v311))
    throw std::runtime_error(
        "--mqtt-client builtin speaks MQTT 5 over plain TCP only: use --mqtt-client libmosquitto "
        "for TLS (--tls-ca, --tls-cert, --tls-key, --tls-insecure) or --mqtt-version 3.1.1");
  mqtt_options.allow_unverified_library = o.allow_unverified_libmosquitto;
  resolve_broker_login(o, registry, mqtt_options);
  if (republished)
    mqtt_options.availability = {
        republished->edge_availability(o.client_id), std::string(kAvailabilityOnline),
        std::string(kAvailabilityOffline), o.republish_retain || o.home_assistant};
  mqtt_options.batch_max = o.batch_max;
  mqtt_options.maximum_packet_size = mqtt::kMaxMqttPacketSize;
  mqtt_options.fatal = fail_stop_process;
  mqtt_options.batch_time = std::chrono::milliseconds(o.batch_time_ms);
  mqtt_options.batch_wait = std::chrono::milliseconds(o.batch_wait_ms);
  // With a shared group every topic, the admin requests included, goes through the share: each
  // message reaches one edge of the group (an admin request sent by all would send the downlink
  // once per edge). The broker delivers a shared message under its own topic name, so the
  // service's topic dispatch is the same either way.
  const std::string share = shared_subscription_prefix(o);
  if (!share.empty() && mqtt_options.version == mqtt::MqttVersion::automatic) {
    mqtt_options.version = mqtt::MqttVersion::v5;
    logging::logger().info("--shared-group: MQTT 5 only (no fallback to 3.1.1)");
  }
  // The PSK baseline's topic only when it is on: otherwise its frames never reach the edge.
  // `dsekp edge send` requests (edge/admin/admin_protocol.hpp); the ACL limits them to the edge
  // account.
  const EdgeTopics topics(o.topic_prefix);
  const std::vector<std::string> filters = {topics.init(),
                                            topics.data(),
                                            topics.per_device_init_filter(),
                                            topics.per_device_data_filter(),
                                            topics.psk(),
                                            admin::request_topic(o.topic_prefix)};
  for (const std::string& filter : filters) {
    const bool used = filter != topics.psk() || o.psk_baseline;
    if (used) mqtt_options.subscriptions.push_back(share + filter);
    // The persistent session keeps what an earlier run of this client id subscribed to: the
    // plain filters of an edge that now shares (every message would come twice), the PSK topic
    // of one that served the baseline. A group left for another is not known here.
    if (!used) mqtt_options.stale_subscriptions.push_back(share + filter);
    if (!share.empty()) mqtt_options.stale_subscriptions.push_back(filter);
  }
  return mqtt_options;
}

std::unique_ptr<transport::Transport> make_transport(const EdgeDaemonOptions& o,
                                                     mqtt::MqttOptions options) {
  if (!o.amqp_nodes.empty()) return std::make_unique<amqp::AmqpTransport>(amqp_options(o, options));
  return make_mqtt_client(o.mqtt_client, std::move(options));
}

std::unique_ptr<transport::Transport> make_mqtt_client(const std::string& name,
                                                       mqtt::MqttOptions options) {
  if (name == "libmosquitto") return std::make_unique<mqtt::MqttClient>(std::move(options));
  if (name == "builtin")
    return std::make_unique<mqtt_builtin::BuiltinMqttClient>(std::move(options));
  throw std::runtime_error("--mqtt-client: expected libmosquitto or builtin, got \"" + name + "\"");
}

}  // namespace dsekp::edge::daemon
