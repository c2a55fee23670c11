// libmosquitto-driven synchronous test client (see mqtt_test_client.hpp).
#include "tests/support/mqtt_test_client.hpp"

#include <mosquitto.h>

#include <stdexcept>

namespace dsekp::test {
namespace {

/// mosquitto_lib_init once per process (it is reference-counted but not thread-safe).
struct LibInit {
  LibInit() { mosquitto_lib_init(); }
  ~LibInit() { mosquitto_lib_cleanup(); }
};

}  // namespace

MqttTestClient::MqttTestClient(const std::string& client_id) {
  static LibInit init;
  mosq_ = mosquitto_new(client_id.c_str(), true, this);
  if (mosq_ == nullptr) throw std::runtime_error("mosquitto_new failed");
  mosquitto_connect_callback_set(mosq_, &MqttTestClient::on_connect);
  mosquitto_subscribe_callback_set(mosq_, &MqttTestClient::on_subscribe);
  mosquitto_publish_callback_set(mosq_, &MqttTestClient::on_publish);
  mosquitto_message_callback_set(mosq_, &MqttTestClient::on_message);
  mosquitto_disconnect_callback_set(mosq_, &MqttTestClient::on_disconnect);
}

MqttTestClient::~MqttTestClient() {
  if (connected_) mosquitto_disconnect(mosq_);
  mosquitto_destroy(mosq_);
}

template <typename Done>
bool MqttTestClient::pump(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    const int rc = mosquitto_loop(mosq_, 50, 1);
    // A refused CONNACK closes the connection: the loop reports it after on_connect ran.
    if (rc != MOSQ_ERR_SUCCESS && !done()) return false;
  }
  return true;
}

std::optional<int> MqttTestClient::connect(int port, const std::string& username,
                                           const std::string& password) {
  if (!username.empty() &&
      mosquitto_username_pw_set(mosq_, username.c_str(), password.c_str()) != MOSQ_ERR_SUCCESS)
    return std::nullopt;
  if (mosquitto_connect(mosq_, "127.0.0.1", port, 30) != MOSQ_ERR_SUCCESS) return std::nullopt;
  pump([this] { return connack_.has_value(); });
  connected_ = connack_ == 0;
  return connack_;
}

std::optional<int> MqttTestClient::subscribe(const std::string& topic) {
  int mid = 0;
  if (mosquitto_subscribe(mosq_, &mid, topic.c_str(), 1) != MOSQ_ERR_SUCCESS) return std::nullopt;
  if (!pump([this, mid] { return last_suback_mid_ == mid; })) return std::nullopt;
  return last_suback_qos_;
}

bool MqttTestClient::publish(const std::string& topic, const std::string& payload) {
  int mid = 0;
  if (mosquitto_publish(mosq_, &mid, topic.c_str(), static_cast<int>(payload.size()),
                        payload.data(), 1, false) != MOSQ_ERR_SUCCESS)
    return false;
  return pump([this, mid] { return last_puback_mid_ == mid; });
}

bool MqttTestClient::received_on(const std::string& topic) const {
  for (const auto& m : received_)
    if (m.topic == topic) return true;
  return false;
}

std::optional<ReceivedMessage> MqttTestClient::wait_for_message(const std::string& topic) {
  if (!pump([this, &topic] { return received_on(topic); })) return std::nullopt;
  for (const auto& m : received_)
    if (m.topic == topic) return m;
  return std::nullopt;
}

bool MqttTestClient::wait_for_payload(const std::string& topic, const std::string& payload) {
  return pump([this, &topic, &payload] {
    for (const auto& m : received_)
      if (m.topic == topic && m.payload == payload) return true;
    return false;
  });
}

bool MqttTestClient::wait_for_count(std::size_t count) {
  return pump([this, count] { return received_.size() >= count; });
}

bool MqttTestClient::wait_for_disconnect() {
  return pump([this] { return disconnected_; });
}

void MqttTestClient::on_disconnect(mosquitto*, void* self, int) {
  auto* client = static_cast<MqttTestClient*>(self);
  client->disconnected_ = true;
  client->connected_ = false;
}

void MqttTestClient::on_connect(mosquitto*, void* self, int rc) {
  static_cast<MqttTestClient*>(self)->connack_ = rc;
}

void MqttTestClient::on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted) {
  auto* client = static_cast<MqttTestClient*>(self);
  client->last_suback_mid_ = mid;
  client->last_suback_qos_ = count > 0 ? granted[0] : -1;
}

void MqttTestClient::on_publish(mosquitto*, void* self, int mid) {
  static_cast<MqttTestClient*>(self)->last_puback_mid_ = mid;
}

void MqttTestClient::on_message(mosquitto*, void* self, const mosquitto_message* message) {
  auto* client = static_cast<MqttTestClient*>(self);
  client->received_.push_back(
      {message->topic, std::string(static_cast<const char*>(message->payload),
                                   static_cast<std::size_t>(message->payloadlen))});
}

}  // namespace dsekp::test
