// What the edge's MQTT connection is asked to do, whichever client does it: the libmosquitto
// client (mqtt_client.hpp, the default) or the built-in one (edge/mqtt_builtin/). Why each
// setting is what it is: mqtt_client.hpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace dsekp::edge::mqtt {

enum class MqttVersion { automatic, v5, v311 };

/// The MQTT 5 Receive Maximum the client sends with CONNECT for `batch_max`: twice it (at least
/// libmosquitto's default 20), so that the broker keeps sending while a batch commits instead of
/// stopping after a batch's worth of unacknowledged messages.
[[nodiscard]] std::uint16_t receive_maximum_for(std::size_t batch_max) noexcept;

/// A burst stops waiting for more messages (MqttOptions::batch_wait) once it holds this many:
/// at most the smallest in-flight window of the brokers' defaults seen (RabbitMQ's MQTT prefetch
/// 10; Mosquitto's max_inflight_messages 20 for 3.1.1, EMQX's max_inflight 32).
inline constexpr std::size_t kBatchWaitMessages = 10;

/// "auto", "5", "3.1.1" (also "311") -> the version; false for anything else.
bool parse_mqtt_version(std::string_view text, MqttVersion& out) noexcept;

/// The client's own availability for whoever watches it (QoS 1): `online` on every accepted
/// CONNACK, `offline` before a clean DISCONNECT, and `offline` as the MQTT will, which the
/// broker publishes when the connection ends any other way (a kill, a power cut, a lost link).
/// Retained only if `retain` (a broker with `retain_available false` refuses a retained will).
struct MqttAvailability {
  std::string topic;  // empty: none
  std::string online = "online";
  std::string offline = "offline";
  bool retain = false;
};

/// TLS to the broker. Empty ca_file: plain TCP.
struct MqttTls {
  std::string ca_file;    // PEM: the CA(s) the broker's certificate must chain to
  std::string cert_file;  // client certificate (PEM), with key_file; both or neither
  std::string key_file;
  bool insecure = false;  // true: skip the host name check (the chain is still verified)
  /// Whether any TLS setting is given: a client without TLS must refuse then, not connect in
  /// clear (with ca_file empty the libmosquitto client refuses the others by name).
  [[nodiscard]] bool requested() const noexcept {
    return !ca_file.empty() || !cert_file.empty() || !key_file.empty() || insecure;
  }
};

struct MqttOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 1883;
  std::string username;  // empty: anonymous
  std::string password;
  std::string client_id = "dsekp-edge";
  int keepalive_s = 30;
  unsigned reconnect_min_s = 1;
  unsigned reconnect_max_s = 30;
  std::vector<std::string> subscriptions;  // QoS 1 each
  // Filters an earlier configuration of this client id may have left in its persistent session
  // (e.g. the plain topics of an edge now in a shared group, which would deliver every message
  // twice): unsubscribed on every CONNACK, before the subscriptions.
  std::vector<std::string> stale_subscriptions;
  MqttVersion version = MqttVersion::automatic;
  std::uint32_t session_expiry_s = 0xFFFFFFFF;  // MQTT 5 only; 0xFFFFFFFF: never expires
  MqttTls tls;
  MqttAvailability availability;
  // Batches (mqtt_client.hpp): messages handled between two batch ends, at most; 1: each alone.
  std::size_t batch_max = 1;
  // A burst stops reading after this long (0: no limit), so PUBACKs and keep-alives are not
  // held back by a slow burst.
  std::chrono::milliseconds batch_time{10};
  // A burst whose messages all answered BurstWait::may_wait waits up to this long after its
  // first message for more (never past batch_time) instead of ending when the socket is empty:
  // at a moderate load many small commits become fewer larger ones, and each message's PUBACK
  // (and its durable record) comes up to this much later. MQTT 5 only (whose CONNECT asks the
  // broker for 2 * batch_max unacknowledged messages), and only until the burst holds
  // kBatchWaitMessages. 0: no wait.
  std::chrono::milliseconds batch_wait{0};
  // MQTT 5 Maximum Packet Size announced in CONNECT (0: none, the protocol's 268,435,455).
  std::uint32_t maximum_packet_size = 0;
  // Run on a libmosquitto other than kVerifiedLibmosquitto (with a warning) instead of refusing
  // to start: for an operator who has checked that release (the kill tests: ctest -R
  // EdgeKillRestart), or a client that does not rely on when PUBACKs are written.
  bool allow_unverified_library = false;
  // Called (loop thread) with what a handler threw; must not return normally. Unset: log and
  // _exit(70) (EX_SOFTWARE) without writing another byte to the broker.
  std::function<void(const std::string& what)> fatal;
};

}  // namespace dsekp::edge::mqtt
