// A small MQTT client for `dsekp bench edge`: libmosquitto's threaded loop, publishes that do not
// wait (QoS 1, unlimited in flight, so the publisher is never the bottleneck), and counters of
// what was acknowledged and received that the benchmark waits on with deadlines.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct mosquitto;
struct mosquitto_message;

namespace dsekp::bench::edge {

class BenchMqttClient {
 public:
  explicit BenchMqttClient(const std::string& client_id);
  ~BenchMqttClient();
  BenchMqttClient(const BenchMqttClient&) = delete;
  BenchMqttClient& operator=(const BenchMqttClient&) = delete;

  /// Connects (clean session) and starts the loop thread; false with `error` on failure.
  bool connect(const std::string& host, int port, std::string& error);
  /// Subscribes at QoS 1 and waits for the SUBACK (5 s).
  bool subscribe(const std::string& topic);
  /// Queues a QoS 1 publish; false if libmosquitto refused it.
  bool publish(const std::string& topic, const std::vector<std::uint8_t>& payload);
  /// Waits until `n` publishes in all were acknowledged (PUBACK) or the timeout passed.
  bool wait_acked(std::size_t n, std::chrono::milliseconds timeout);
  /// Waits until `n` messages in all were received or the timeout passed.
  bool wait_received(std::size_t n, std::chrono::milliseconds timeout);
  /// The first message received on `topic` within the timeout.
  std::optional<std::vector<std::uint8_t>> wait_message(const std::string& topic,
                                                        std::chrono::milliseconds timeout);
  [[nodiscard]] std::size_t received() const;
  /// steady_clock time of the most recent message received.
  [[nodiscard]] std::chrono::steady_clock::time_point last_received_at() const;

 private:
  static void on_connect(mosquitto*, void* self, int rc);
  static void on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted);
  static void on_publish(mosquitto*, void* self, int mid);
  static void on_message(mosquitto*, void* self, const mosquitto_message* message);

  mosquitto* mosq_ = nullptr;
  bool started_ = false;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<int> connack_;
  std::size_t subacks_ = 0;
  std::size_t acked_ = 0;
  std::size_t received_ = 0;
  std::chrono::steady_clock::time_point last_received_at_{};
  std::map<std::string, std::vector<std::uint8_t>> first_on_topic_;
};

}  // namespace dsekp::bench::edge
