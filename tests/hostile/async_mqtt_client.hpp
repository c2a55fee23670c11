// A pipelined MQTT 3.1.1 client for the hostile-input tests: libmosquitto's own network thread
// (loop_start) sends and receives, so the attacker can put thousands of QoS 1 messages on the
// broker without a round trip per message, and can record what it hears on the topics it
// subscribed to (captured frames to replay later). Every wait is bounded.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/mqtt_test_client.hpp"

struct mosquitto;
struct mosquitto_message;

namespace dsekp::hostile {

using dsekp::test::ReceivedMessage;

class AsyncMqttClient {
 public:
  explicit AsyncMqttClient(const std::string& client_id);
  ~AsyncMqttClient();
  AsyncMqttClient(const AsyncMqttClient&) = delete;
  AsyncMqttClient& operator=(const AsyncMqttClient&) = delete;

  /// Connects anonymously to 127.0.0.1:`port` and starts the network thread; true on CONNACK 0.
  bool connect(int port);
  /// Subscribes at QoS 1 and waits for the SUBACK.
  bool subscribe(const std::string& topic);
  /// Queues one QoS 1 publish. Waits (bounded) while too many are unacknowledged, so a flood
  /// cannot grow the client's own queue without limit. False if libmosquitto refused it.
  /// `retain`: the broker keeps a copy and sends it to every later subscriber.
  bool publish(const std::string& topic, const std::string& payload, bool retain = false);
  /// Waits until the broker acknowledged every publish so far.
  bool wait_all_acked(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  /// Messages received so far on `topic` ("" = all), in arrival order.
  [[nodiscard]] std::vector<ReceivedMessage> messages(const std::string& topic = "") const;
  /// Waits until at least `count` messages arrived on `topic`.
  bool wait_for_messages(const std::string& topic, std::size_t count,
                         std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  static void on_connect(mosquitto*, void* self, int rc);
  static void on_subscribe(mosquitto*, void* self, int mid, int, const int*);
  static void on_publish(mosquitto*, void* self, int mid);
  static void on_message(mosquitto*, void* self, const mosquitto_message* message);
  bool wait(const std::function<bool()>& done, std::chrono::milliseconds timeout) const;

  static constexpr std::size_t kMaxUnacked = 500;

  mosquitto* mosq_ = nullptr;
  bool loop_started_ = false;
  std::atomic<int> connack_{-1};
  std::atomic<int> last_suback_mid_{-1};
  std::atomic<std::size_t> published_{0};
  std::atomic<std::size_t> acked_{0};
  mutable std::mutex mutex_;
  std::vector<ReceivedMessage> received_;
};

}  // namespace dsekp::hostile
