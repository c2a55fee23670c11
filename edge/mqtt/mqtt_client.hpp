// The edge's MQTT connection: a small wrapper over libmosquitto, MQTT 5 where the broker
// supports it (else 3.1.1), optionally over TLS.
//
// Why these settings (ARCHITECTURE.md "The edge's durability"):
//   * clean_session = false with a fixed client id: the broker keeps the edge's subscriptions and
//     queues QoS 1 messages for it while it is down, so frames sent during a restart arrive after.
//   * QoS 1 subscriptions and publishes: at-least-once; the edge's store makes it exactly-once.
//   * MQTT 5: clean start = false plus a Session Expiry Interval (default 0xFFFFFFFF, "never"),
//     which is what 3.1.1's clean_session = false means; without the interval an MQTT 5 session
//     would end with the connection. libmosquitto sends CONNECT properties only on the connect
//     call that is given them (its own reconnect sends none), so this client runs its own
//     connect/reconnect loop and passes them on every connection. `auto` tries MQTT 5 first and
//     falls back to 3.1.1 when the broker's CONNACK says the version is not supported.
//   * The loop runs on a thread of ours with mosquitto_threaded_set(true), which for libmosquitto
//     is the threaded mode: libmosquitto 2.0.11 answers a QoS 1 PUBLISH with
//     PUBACK before calling on_message, but in the threaded loop that PUBACK is only queued and
//     written after on_message returns (shared/design/implementation-notes.md); the same holds
//     for MQTT 5 (on_message_v5 is called where on_message is, after the PUBACK is queued). The
//     handler commits inside on_message, so a crash before the commit leaves the message
//     unacknowledged and the broker redelivers it. Proven by
//     tests/edge_daemon/kill_restart_test.cpp, which SIGKILLs the edge inside on_message before and
//     after the commit. (The loop also reads and handles the next message before writing the queued
//     PUBACK, so a kill may leave the previous message unacknowledged too: it is redelivered and
//     refused as a replay.)
//   * Reconnect with exponential backoff (reconnect_min_s doubling up to reconnect_max_s), done by
//     the loop thread; subscriptions are renewed on every CONNACK (harmless with a persistent
//     session, needed if the broker lost it).
//
// Threads: the handler runs on libmosquitto's loop thread, one message at a time, in arrival
// order. publish() may be called from any thread, including from inside the handler.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "dsekp/bytes.hpp"

struct mosquitto;
struct mosquitto_message;
struct mqtt5__property;

namespace dsekp::edge::mqtt {

enum class MqttVersion { automatic, v5, v311 };

/// "auto", "5", "3.1.1" (also "311") -> the version; false for anything else.
bool parse_mqtt_version(std::string_view text, MqttVersion& out) noexcept;

/// TLS to the broker (mosquitto_tls_set). Empty ca_file: plain TCP.
struct MqttTls {
  std::string ca_file;    // PEM: the CA(s) the broker's certificate must chain to
  std::string cert_file;  // client certificate (PEM), with key_file; both or neither
  std::string key_file;
  bool insecure = false;  // true: skip the host name check (the chain is still verified)
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
  MqttVersion version = MqttVersion::automatic;
  std::uint32_t session_expiry_s = 0xFFFFFFFF;  // MQTT 5 only; 0xFFFFFFFF: never expires
  MqttTls tls;
};

/// Called on the loop thread for every received message.
using MessageHandler = std::function<void(std::string_view topic, ByteView payload)>;
/// Called on the loop thread each time every subscription of a (re)connection was granted.
using ReadyHandler = std::function<void()>;

class MqttClient {
 public:
  MqttClient(MqttOptions options, MessageHandler handler, ReadyHandler on_ready = {});
  ~MqttClient();
  MqttClient(const MqttClient&) = delete;
  MqttClient& operator=(const MqttClient&) = delete;

  /// Starts connecting in the background (the loop thread retries until the broker answers).
  /// False with `error` for what cannot get better by retrying (bad options, no thread).
  [[nodiscard]] bool start(std::string& error);
  /// Disconnects and joins the loop thread. Idempotent.
  void stop() noexcept;

  /// Queues a publish (QoS 1 by default). False if libmosquitto refused it (it queues while
  /// disconnected, so false means a bad argument or no memory).
  bool publish(const std::string& topic, ByteView payload, int qos = 1) noexcept;

  /// Whether the last CONNACK accepted the edge and no disconnect came since (for /healthz).
  [[nodiscard]] bool connected() const noexcept { return connected_.load(); }
  /// The protocol of the current (or last) connection: 5 or 4 (3.1.1).
  [[nodiscard]] int protocol() const noexcept { return protocol_.load(); }

 private:
  void run();  // the loop thread: connect, loop, back off, reconnect until stop()
  int connect_once();
  void pause(unsigned seconds);

  static void on_connect(mosquitto*, void* self, int rc, int flags, const mqtt5__property* props);
  static void on_disconnect(mosquitto*, void* self, int rc, const mqtt5__property* props);
  static void on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted,
                           const mqtt5__property* props);
  static void on_message(mosquitto*, void* self, const mosquitto_message* message,
                         const mqtt5__property* props);

  MqttOptions options_;
  MessageHandler handler_;
  ReadyHandler on_ready_;
  mosquitto* mosq_ = nullptr;
  bool started_ = false;
  std::thread thread_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> connected_{false};
  std::atomic<int> protocol_{5};
  bool fall_back_ = false;   // auto: the broker refused MQTT 5 (loop thread only)
  std::size_t subacks_ = 0;  // SUBACKs since the last CONNACK (loop thread only)
};

}  // namespace dsekp::edge::mqtt
