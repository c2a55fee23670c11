// A synchronous MQTT 3.1.1 client over libmosquitto for the broker ACL test: every call drives
// the network loop itself until the broker's answer arrives or a deadline passes, so the test
// reads top to bottom and never waits unboundedly.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

struct mosquitto;
struct mosquitto_message;

namespace dsekp::test {

struct ReceivedMessage {
  std::string topic;
  std::string payload;
};

class MqttTestClient {
 public:
  explicit MqttTestClient(const std::string& client_id);
  ~MqttTestClient();
  MqttTestClient(const MqttTestClient&) = delete;
  MqttTestClient& operator=(const MqttTestClient&) = delete;

  /// Connects and returns the CONNACK return code (0 = accepted; 5 = not authorised), or
  /// nullopt if no CONNACK came within the timeout. Empty `username` = anonymous.
  std::optional<int> connect(int port, const std::string& username, const std::string& password);
  /// Subscribes at QoS 1 and returns the granted QoS from the SUBACK (0x80 = refused).
  std::optional<int> subscribe(const std::string& topic);
  /// Publishes at QoS 1 and waits for the PUBACK. With MQTT 3.1.1 a broker acknowledges a
  /// publish its ACL drops, so this proves only that the broker took the packet.
  bool publish(const std::string& topic, const std::string& payload);
  /// Waits until a message on `topic` has arrived; returns it.
  std::optional<ReceivedMessage> wait_for_message(const std::string& topic);
  /// Waits until a message on `topic` with exactly `payload` has arrived; false on the timeout.
  bool wait_for_payload(const std::string& topic, const std::string& payload);
  /// Waits until at least `count` messages have arrived in all; false on the timeout.
  bool wait_for_count(std::size_t count);
  /// Everything received so far, in arrival order.
  [[nodiscard]] const std::vector<ReceivedMessage>& received() const noexcept { return received_; }
  bool received_on(const std::string& topic) const;
  /// Waits until the broker has closed the connection; false on the timeout.
  bool wait_for_disconnect();

  static constexpr std::chrono::milliseconds kTimeout{5000};

 private:
  /// Runs the network loop until `done()` or the timeout; returns done().
  template <typename Done>
  bool pump(Done done);

  static void on_connect(mosquitto*, void* self, int rc);
  static void on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted);
  static void on_publish(mosquitto*, void* self, int mid);
  static void on_message(mosquitto*, void* self, const mosquitto_message* message);
  static void on_disconnect(mosquitto*, void* self, int rc);

  mosquitto* mosq_ = nullptr;
  std::optional<int> connack_;
  int last_suback_mid_ = -1;
  int last_suback_qos_ = -1;
  int last_puback_mid_ = -1;
  bool connected_ = false;
  bool disconnected_ = false;
  std::vector<ReceivedMessage> received_;
};

}  // namespace dsekp::test
