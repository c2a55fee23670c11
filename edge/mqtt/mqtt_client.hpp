// The edge's MQTT connection: a small wrapper over libmosquitto (MQTT 3.1.1; MQTT 5 is left for
// later).
//
// Why these settings (ARCHITECTURE.md "The edge's durability"):
//   * clean_session = false with a fixed client id: the broker keeps the edge's subscriptions and
//     queues QoS 1 messages for it while it is down, so frames sent during a restart arrive after.
//   * QoS 1 subscriptions and publishes: at-least-once; the edge's store makes it exactly-once.
//   * The THREADED loop (mosquitto_loop_start): libmosquitto 2.0.11 answers a QoS 1 PUBLISH with
//     PUBACK before calling on_message, but in the threaded loop that PUBACK is only queued and
//     written after on_message returns (shared/design/implementation-notes.md). The handler
//     commits inside on_message, so a crash before the commit leaves the message unacknowledged
//     and the broker redelivers it. Proven by tests/edge_daemon/kill_restart_test.cpp, which
//     SIGKILLs the edge inside on_message before and after the commit. (The loop also reads and
//     handles the next message before writing the queued PUBACK, so a kill may leave the
//     previous message unacknowledged too: it is redelivered and refused as a replay.)
//   * Reconnect with exponential backoff (mosquitto_reconnect_delay_set), done by the loop thread;
//     subscriptions are renewed on every CONNACK (harmless with a persistent session, needed if the
//     broker lost it).
//
// Threads: the handler runs on libmosquitto's loop thread, one message at a time, in arrival
// order. publish() may be called from any thread, including from inside the handler.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dsekp/bytes.hpp"

struct mosquitto;
struct mosquitto_message;

namespace dsekp::edge::mqtt {

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

 private:
  static void on_connect(mosquitto*, void* self, int rc);
  static void on_disconnect(mosquitto*, void* self, int rc);
  static void on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted);
  static void on_message(mosquitto*, void* self, const mosquitto_message* message);

  MqttOptions options_;
  MessageHandler handler_;
  ReadyHandler on_ready_;
  mosquitto* mosq_ = nullptr;
  bool started_ = false;
  std::atomic<bool> connected_{false};
  std::size_t subacks_ = 0;  // SUBACKs since the last CONNACK (loop thread only)
};

}  // namespace dsekp::edge::mqtt
