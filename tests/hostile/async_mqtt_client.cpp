// libmosquitto with its own network thread (see async_mqtt_client.hpp).
#include "async_mqtt_client.hpp"

#include <mosquitto.h>

#include <stdexcept>
#include <thread>

namespace dsekp::hostile {

AsyncMqttClient::AsyncMqttClient(const std::string& client_id) {
  // mosquitto_lib_init is reference-counted: this pairs with MqttTestClient's own call.
  static const struct LibInit {
    LibInit() { mosquitto_lib_init(); }
    ~LibInit() { mosquitto_lib_cleanup(); }
  } lib_init;
  mosq_ = mosquitto_new(client_id.c_str(), true, this);
  if (mosq_ == nullptr) throw std::runtime_error("mosquitto_new failed");
  // Room for a pipelined flood: the broker acknowledges as fast as it reads.
  mosquitto_int_option(mosq_, MOSQ_OPT_SEND_MAXIMUM, 1000);
  mosquitto_connect_callback_set(mosq_, &AsyncMqttClient::on_connect);
  mosquitto_subscribe_callback_set(mosq_, &AsyncMqttClient::on_subscribe);
  mosquitto_publish_callback_set(mosq_, &AsyncMqttClient::on_publish);
  mosquitto_message_callback_set(mosq_, &AsyncMqttClient::on_message);
}

AsyncMqttClient::~AsyncMqttClient() {
  if (loop_started_) {
    mosquitto_disconnect(mosq_);
    mosquitto_loop_stop(mosq_, false);
  }
  mosquitto_destroy(mosq_);
}

bool AsyncMqttClient::wait(const std::function<bool()>& done,
                           std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

bool AsyncMqttClient::connect(int port) {
  if (mosquitto_connect(mosq_, "127.0.0.1", port, 30) != MOSQ_ERR_SUCCESS) return false;
  if (mosquitto_loop_start(mosq_) != MOSQ_ERR_SUCCESS) return false;
  loop_started_ = true;
  return wait([this] { return connack_.load() >= 0; }, std::chrono::seconds(5)) &&
         connack_.load() == 0;
}

bool AsyncMqttClient::subscribe(const std::string& topic) {
  int mid = 0;
  if (mosquitto_subscribe(mosq_, &mid, topic.c_str(), 1) != MOSQ_ERR_SUCCESS) return false;
  return wait([this, mid] { return last_suback_mid_.load() == mid; }, std::chrono::seconds(5));
}

bool AsyncMqttClient::publish(const std::string& topic, const std::string& payload, bool retain) {
  if (!wait([this] { return published_.load() - acked_.load() < kMaxUnacked; },
            std::chrono::seconds(10)))
    return false;
  ++published_;
  if (mosquitto_publish(mosq_, nullptr, topic.c_str(), static_cast<int>(payload.size()),
                        payload.data(), 1, retain) != MOSQ_ERR_SUCCESS) {
    --published_;
    return false;
  }
  return true;
}

bool AsyncMqttClient::wait_all_acked(std::chrono::milliseconds timeout) {
  return wait([this] { return acked_.load() >= published_.load(); }, timeout);
}

std::vector<ReceivedMessage> AsyncMqttClient::messages(const std::string& topic) const {
  std::lock_guard lock(mutex_);
  if (topic.empty()) return received_;
  std::vector<ReceivedMessage> out;
  for (const auto& m : received_)
    if (m.topic == topic) out.push_back(m);
  return out;
}

bool AsyncMqttClient::wait_for_messages(const std::string& topic, std::size_t count,
                                        std::chrono::milliseconds timeout) const {
  return wait([&] { return messages(topic).size() >= count; }, timeout);
}

void AsyncMqttClient::on_connect(mosquitto*, void* self, int rc) {
  static_cast<AsyncMqttClient*>(self)->connack_ = rc;
}

void AsyncMqttClient::on_subscribe(mosquitto*, void* self, int mid, int, const int*) {
  static_cast<AsyncMqttClient*>(self)->last_suback_mid_ = mid;
}

void AsyncMqttClient::on_publish(mosquitto*, void* self, int) {
  ++static_cast<AsyncMqttClient*>(self)->acked_;
}

void AsyncMqttClient::on_message(mosquitto*, void* self, const mosquitto_message* message) {
  auto* client = static_cast<AsyncMqttClient*>(self);
  std::lock_guard lock(client->mutex_);
  client->received_.push_back(
      {message->topic, std::string(static_cast<const char*>(message->payload),
                                   static_cast<std::size_t>(message->payloadlen))});
}

}  // namespace dsekp::hostile
