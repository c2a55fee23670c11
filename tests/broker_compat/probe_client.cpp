// The probing MQTT client (see probe_client.hpp).
#include "probe_client.hpp"

#include <mosquitto.h>

#include <algorithm>
#include <stdexcept>

namespace dsekp::test {
namespace {

/// mosquitto_lib_init once per process (reference-counted, not thread-safe).
struct LibInit {
  LibInit() { mosquitto_lib_init(); }
  ~LibInit() { mosquitto_lib_cleanup(); }
};

}  // namespace

ProbeClient::ProbeClient(const std::string& client_id, Version version, bool clean_session) {
  static LibInit init;
  mosq_ = mosquitto_new(client_id.c_str(), clean_session, this);
  if (mosq_ == nullptr) throw std::runtime_error("mosquitto_new failed");
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION,
                       version == Version::v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311);
  // The v5 connect callback also carries the CONNACK flags (session present) under 3.1.1.
  mosquitto_connect_v5_callback_set(mosq_, &ProbeClient::on_connect);
  mosquitto_subscribe_callback_set(mosq_, &ProbeClient::on_subscribe);
  mosquitto_publish_callback_set(mosq_, &ProbeClient::on_publish);
  mosquitto_message_callback_set(mosq_, &ProbeClient::on_message);
  mosquitto_disconnect_callback_set(mosq_, &ProbeClient::on_disconnect);
}

ProbeClient::~ProbeClient() {
  if (connected_ && !lost_) disconnect();
  mosquitto_destroy(mosq_);
}

template <typename Done>
bool ProbeClient::pump(Done done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (lost_ || std::chrono::steady_clock::now() >= deadline) return false;
    const int rc = mosquitto_loop(mosq_, 50, 1);
    if (rc != MOSQ_ERR_SUCCESS && !done()) {
      lost_ = true;
      return false;
    }
  }
  return true;
}

void ProbeClient::set_login(const std::string& username, const std::string& password) {
  if (mosquitto_username_pw_set(mosq_, username.c_str(), password.c_str()) != MOSQ_ERR_SUCCESS)
    throw std::runtime_error("mosquitto_username_pw_set failed");
}

std::optional<int> ProbeClient::connect(int port) {
  if (mosquitto_connect(mosq_, "127.0.0.1", port, 30) != MOSQ_ERR_SUCCESS) return std::nullopt;
  pump([this] { return connack_.has_value(); });
  connected_ = connack_ == 0;
  if (connected_) lost_ = false;
  return connack_;
}

std::optional<int> ProbeClient::subscribe(const std::string& topic, int qos) {
  int mid = 0;
  if (mosquitto_subscribe(mosq_, &mid, topic.c_str(), qos) != MOSQ_ERR_SUCCESS) return std::nullopt;
  if (!pump([this, mid] { return last_suback_mid_ == mid; })) return std::nullopt;
  return last_suback_qos_;
}

bool ProbeClient::publish(const std::string& topic, const std::string& payload, int qos,
                          bool retain) {
  int mid = 0;
  if (mosquitto_publish(mosq_, &mid, topic.c_str(), static_cast<int>(payload.size()),
                        payload.data(), qos, retain) != MOSQ_ERR_SUCCESS)
    return false;
  return pump([this, mid] {
    return std::find(completed_mids_.begin(), completed_mids_.end(), mid) != completed_mids_.end();
  });
}

bool ProbeClient::wait_for_count(std::size_t count, std::chrono::milliseconds timeout) {
  return pump([this, count] { return received_.size() >= count; }, timeout);
}

bool ProbeClient::wait_for_topic(const std::string& topic, std::chrono::milliseconds timeout) {
  return pump(
      [this, &topic] {
        return std::any_of(received_.begin(), received_.end(),
                           [&topic](const ProbeMessage& m) { return m.topic == topic; });
      },
      timeout);
}

void ProbeClient::drain(std::chrono::milliseconds period) {
  pump([] { return false; }, period);
}

void ProbeClient::disconnect() {
  if (!connected_) return;
  mosquitto_disconnect(mosq_);
  // The loop returns an error (no connection) once the DISCONNECT is written and closed.
  pump([this] { return !connected_; }, std::chrono::milliseconds(2000));
  connected_ = false;
  lost_ = false;
}

void ProbeClient::on_connect(mosquitto*, void* self, int rc, int flags, const mqtt5__property*) {
  auto* client = static_cast<ProbeClient*>(self);
  client->connack_ = rc;
  client->session_present_ = (flags & 1) != 0;
}

void ProbeClient::on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted) {
  auto* client = static_cast<ProbeClient*>(self);
  client->last_suback_mid_ = mid;
  client->last_suback_qos_ = count > 0 ? granted[0] : -1;
}

void ProbeClient::on_publish(mosquitto*, void* self, int mid) {
  static_cast<ProbeClient*>(self)->completed_mids_.push_back(mid);
}

void ProbeClient::on_message(mosquitto*, void* self, const mosquitto_message* message) {
  static_cast<ProbeClient*>(self)->received_.push_back(
      {message->topic,
       std::string(static_cast<const char*>(message->payload),
                   static_cast<std::size_t>(message->payloadlen)),
       message->qos, message->retain});
}

void ProbeClient::on_disconnect(mosquitto*, void* self, int rc) {
  auto* client = static_cast<ProbeClient*>(self);
  client->connected_ = false;
  if (rc != 0) client->lost_ = true;  // rc 0 only for our own DISCONNECT
}

}  // namespace dsekp::test
