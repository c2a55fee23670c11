// BenchMqttClient over libmosquitto (see bench_mqtt_client.hpp).
#include "bench/edge/bench_mqtt_client.hpp"

#include <mosquitto.h>

namespace dsekp::bench::edge {

BenchMqttClient::BenchMqttClient(const std::string& client_id) {
  mosquitto_lib_init();  // reference-counted in libmosquitto 2.0
  mosq_ = mosquitto_new(client_id.c_str(), true, this);
  if (mosq_ == nullptr) return;
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  mosquitto_int_option(mosq_, MOSQ_OPT_TCP_NODELAY, 1);
  // 0 = no limit on QoS 1 messages in flight: the publisher never waits for PUBACKs.
  mosquitto_max_inflight_messages_set(mosq_, 0);
  mosquitto_connect_callback_set(mosq_, &BenchMqttClient::on_connect);
  mosquitto_subscribe_callback_set(mosq_, &BenchMqttClient::on_subscribe);
  mosquitto_publish_callback_set(mosq_, &BenchMqttClient::on_publish);
  mosquitto_message_callback_set(mosq_, &BenchMqttClient::on_message);
}

BenchMqttClient::~BenchMqttClient() {
  if (mosq_ == nullptr) return;
  if (started_) {
    mosquitto_disconnect(mosq_);
    if (mosquitto_loop_stop(mosq_, false) != MOSQ_ERR_SUCCESS) mosquitto_loop_stop(mosq_, true);
  }
  mosquitto_destroy(mosq_);
  mosquitto_lib_cleanup();
}

bool BenchMqttClient::connect(const std::string& host, int port, std::string& error) {
  if (mosq_ == nullptr) {
    error = "mosquitto_new failed";
    return false;
  }
  int rc = mosquitto_connect(mosq_, host.c_str(), port, 60);
  if (rc != MOSQ_ERR_SUCCESS) {
    error = std::string("connect: ") + mosquitto_strerror(rc);
    return false;
  }
  rc = mosquitto_loop_start(mosq_);
  if (rc != MOSQ_ERR_SUCCESS) {
    error = std::string("loop: ") + mosquitto_strerror(rc);
    return false;
  }
  started_ = true;
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, std::chrono::seconds(5), [&] { return connack_.has_value(); })) {
    error = "no CONNACK within 5 s";
    return false;
  }
  if (*connack_ != 0) {
    error = std::string("refused: ") + mosquitto_connack_string(*connack_);
    return false;
  }
  return true;
}

bool BenchMqttClient::subscribe(const std::string& topic) {
  std::size_t before = 0;
  {
    std::lock_guard lock(mutex_);
    before = subacks_;
  }
  if (mosquitto_subscribe(mosq_, nullptr, topic.c_str(), 1) != MOSQ_ERR_SUCCESS) return false;
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, std::chrono::seconds(5), [&] { return subacks_ > before; });
}

bool BenchMqttClient::publish(const std::string& topic, const std::vector<std::uint8_t>& payload) {
  return mosquitto_publish(mosq_, nullptr, topic.c_str(), static_cast<int>(payload.size()),
                           payload.data(), 1, false) == MOSQ_ERR_SUCCESS;
}

bool BenchMqttClient::wait_acked(std::size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return acked_ >= n; });
}

bool BenchMqttClient::wait_received(std::size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return received_ >= n; });
}

std::optional<std::vector<std::uint8_t>> BenchMqttClient::wait_message(
    const std::string& topic, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [&] { return first_on_topic_.count(topic) > 0; }))
    return std::nullopt;
  return first_on_topic_.at(topic);
}

std::size_t BenchMqttClient::received() const {
  std::lock_guard lock(mutex_);
  return received_;
}

std::chrono::steady_clock::time_point BenchMqttClient::last_received_at() const {
  std::lock_guard lock(mutex_);
  return last_received_at_;
}

void BenchMqttClient::on_connect(mosquitto*, void* self, int rc) {
  auto* c = static_cast<BenchMqttClient*>(self);
  std::lock_guard lock(c->mutex_);
  c->connack_ = rc;
  c->changed_.notify_all();
}

void BenchMqttClient::on_subscribe(mosquitto*, void* self, int, int, const int*) {
  auto* c = static_cast<BenchMqttClient*>(self);
  std::lock_guard lock(c->mutex_);
  ++c->subacks_;
  c->changed_.notify_all();
}

void BenchMqttClient::on_publish(mosquitto*, void* self, int) {
  auto* c = static_cast<BenchMqttClient*>(self);
  std::lock_guard lock(c->mutex_);
  ++c->acked_;
  c->changed_.notify_all();
}

void BenchMqttClient::on_message(mosquitto*, void* self, const mosquitto_message* m) {
  auto* c = static_cast<BenchMqttClient*>(self);
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(c->mutex_);
  ++c->received_;
  c->last_received_at_ = now;
  if (c->first_on_topic_.count(m->topic) == 0) {
    const auto* p = static_cast<const std::uint8_t*>(m->payload);
    c->first_on_topic_[m->topic] =
        std::vector<std::uint8_t>(p, p + (m->payloadlen < 0 ? 0 : m->payloadlen));
  }
  c->changed_.notify_all();
}

}  // namespace dsekp::bench::edge
