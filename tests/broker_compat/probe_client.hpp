// A synchronous libmosquitto client for probing what a broker supports: unlike
// tests/support's MqttTestClient (QoS 1, clean session, MQTT 3.1.1 only) it chooses the
// protocol version, the clean-session flag, the QoS and the retain flag, and it reports a
// connection the broker closed. Every call drives the network loop itself until the answer
// arrives, the connection is lost or a deadline passes, so no wait is unbounded.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

struct mosquitto;
struct mosquitto_message;
struct mqtt5__property;

namespace dsekp::test {

struct ProbeMessage {
  std::string topic;
  std::string payload;
  int qos = 0;
  bool retain = false;
};

class ProbeClient {
 public:
  enum class Version { v311, v5 };
  ProbeClient(const std::string& client_id, Version version = Version::v311,
              bool clean_session = true);
  ~ProbeClient();
  ProbeClient(const ProbeClient&) = delete;
  ProbeClient& operator=(const ProbeClient&) = delete;

  /// The user name and password the next connect() sends (none by default: anonymous).
  void set_login(const std::string& username, const std::string& password);
  /// The CONNACK's return (3.1.1) or reason (5) code, 0 = accepted; nullopt if none came.
  std::optional<int> connect(int port);
  /// The CONNACK's session-present flag (only meaningful after an accepted connect).
  [[nodiscard]] bool session_present() const noexcept { return session_present_; }
  /// The granted QoS from the SUBACK (128 = refused); nullopt if no SUBACK came.
  std::optional<int> subscribe(const std::string& topic, int qos);
  /// Publishes and, for QoS 1/2, waits for the flow to complete (PUBACK, or PUBREC-PUBREL-
  /// PUBCOMP). True once complete (QoS 0: once written); false on a timeout or a lost connection.
  bool publish(const std::string& topic, const std::string& payload, int qos, bool retain = false);
  /// Waits until at least `count` messages have arrived in all; false on the timeout.
  bool wait_for_count(std::size_t count, std::chrono::milliseconds timeout = kTimeout);
  /// Waits until a message on `topic` has arrived; false on the timeout.
  bool wait_for_topic(const std::string& topic, std::chrono::milliseconds timeout = kTimeout);
  /// Runs the loop for `period` (to see that nothing more arrives).
  void drain(std::chrono::milliseconds period);
  /// Sends DISCONNECT and runs the loop until the socket is closed (bounded).
  void disconnect();

  [[nodiscard]] const std::vector<ProbeMessage>& received() const noexcept { return received_; }
  /// True once the broker closed the connection (or the loop failed) without our DISCONNECT.
  [[nodiscard]] bool lost() const noexcept { return lost_; }

  static constexpr std::chrono::milliseconds kTimeout{5000};

 private:
  template <typename Done>
  bool pump(Done done, std::chrono::milliseconds timeout = kTimeout);

  static void on_connect(mosquitto*, void* self, int rc, int flags, const mqtt5__property*);
  static void on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted);
  static void on_publish(mosquitto*, void* self, int mid);
  static void on_message(mosquitto*, void* self, const mosquitto_message* message);
  static void on_disconnect(mosquitto*, void* self, int rc);

  mosquitto* mosq_ = nullptr;
  std::optional<int> connack_;
  bool session_present_ = false;
  bool connected_ = false;
  bool lost_ = false;
  int last_suback_mid_ = -1;
  int last_suback_qos_ = -1;
  std::vector<int> completed_mids_;
  std::vector<ProbeMessage> received_;
};

}  // namespace dsekp::test
