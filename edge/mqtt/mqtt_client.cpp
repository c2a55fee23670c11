// MqttClient over libmosquitto (see mqtt_client.hpp for the settings and why).
#include "edge/mqtt/mqtt_client.hpp"

#include <mosquitto.h>

#include <cstdio>
#include <mutex>
#include <utility>

namespace dsekp::edge::mqtt {
namespace {

// mosquitto_lib_init is not thread-safe and must run once per process, before any client.
void init_library_once() {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
}

}  // namespace

MqttClient::MqttClient(MqttOptions options, MessageHandler handler, ReadyHandler on_ready)
    : options_(std::move(options)), handler_(std::move(handler)), on_ready_(std::move(on_ready)) {}

MqttClient::~MqttClient() {
  stop();
  if (mosq_ != nullptr) mosquitto_destroy(mosq_);
}

bool MqttClient::start(std::string& error) {
  if (started_) {
    error = "the MQTT client is already started";
    return false;
  }
  init_library_once();
  // clean_session = false: the persistent session that makes the broker queue for the edge.
  mosq_ = mosquitto_new(options_.client_id.c_str(), false, this);
  if (mosq_ == nullptr) {
    error = "mosquitto_new failed (empty client id or no memory)";
    return false;
  }
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  // No Nagle: the edge writes a PUBACK and then the ACK frame back to back; with Nagle the second
  // small write waits for the broker's delayed TCP ACK (~40 ms on loopback, measured by the device
  // tests), which would show up as handshake latency that is not the protocol's.
  mosquitto_int_option(mosq_, MOSQ_OPT_TCP_NODELAY, 1);
  mosquitto_connect_callback_set(mosq_, &MqttClient::on_connect);
  mosquitto_disconnect_callback_set(mosq_, &MqttClient::on_disconnect);
  mosquitto_message_callback_set(mosq_, &MqttClient::on_message);
  mosquitto_subscribe_callback_set(mosq_, &MqttClient::on_subscribe);
  if (!options_.username.empty()) {
    const int rc =
        mosquitto_username_pw_set(mosq_, options_.username.c_str(), options_.password.c_str());
    if (rc != MOSQ_ERR_SUCCESS) {
      error = std::string("mosquitto_username_pw_set: ") + mosquitto_strerror(rc);
      return false;
    }
  }
  mosquitto_reconnect_delay_set(mosq_, options_.reconnect_min_s, options_.reconnect_max_s, true);
  // connect_async: a broker that is not up yet is retried by the loop thread, not a start error.
  int rc =
      mosquitto_connect_async(mosq_, options_.host.c_str(), options_.port, options_.keepalive_s);
  if (rc != MOSQ_ERR_SUCCESS && rc != MOSQ_ERR_ERRNO) {
    error = std::string("mosquitto_connect_async: ") + mosquitto_strerror(rc);
    return false;
  }
  rc = mosquitto_loop_start(mosq_);
  if (rc != MOSQ_ERR_SUCCESS) {
    error = std::string("mosquitto_loop_start: ") + mosquitto_strerror(rc);
    return false;
  }
  started_ = true;
  return true;
}

void MqttClient::stop() noexcept {
  if (!started_) return;
  started_ = false;
  mosquitto_disconnect(mosq_);
  // force = false: the loop thread exits after the DISCONNECT was written.
  if (mosquitto_loop_stop(mosq_, false) != MOSQ_ERR_SUCCESS) mosquitto_loop_stop(mosq_, true);
  connected_ = false;
}

bool MqttClient::publish(const std::string& topic, ByteView payload, int qos) noexcept {
  if (mosq_ == nullptr) return false;
  const int rc = mosquitto_publish(mosq_, nullptr, topic.c_str(), static_cast<int>(payload.size()),
                                   payload.data(), qos, false);
  return rc == MOSQ_ERR_SUCCESS || rc == MOSQ_ERR_NO_CONN;  // queued for the reconnect
}

void MqttClient::on_connect(mosquitto* mosq, void* self, int rc) {
  auto* client = static_cast<MqttClient*>(self);
  if (rc != 0) {
    std::fprintf(stderr, "dsekp edge: broker refused the connection: %s\n",
                 mosquitto_connack_string(rc));
    return;
  }
  client->subacks_ = 0;
  for (const auto& topic : client->options_.subscriptions) {
    const int s = mosquitto_subscribe(mosq, nullptr, topic.c_str(), 1);
    if (s != MOSQ_ERR_SUCCESS)
      std::fprintf(stderr, "dsekp edge: subscribe %s: %s\n", topic.c_str(), mosquitto_strerror(s));
  }
  client->connected_ = true;
  std::fprintf(stderr, "dsekp edge: connected to %s:%u\n", client->options_.host.c_str(),
               static_cast<unsigned>(client->options_.port));
}

void MqttClient::on_subscribe(mosquitto*, void* self, int, int count, const int* granted) {
  auto* client = static_cast<MqttClient*>(self);
  for (int i = 0; i < count; ++i)
    if (granted[i] > 1) std::fprintf(stderr, "dsekp edge: the broker refused a subscription\n");
  // One line once every topic is subscribed: operators (and the tests) wait for it.
  if (++client->subacks_ == client->options_.subscriptions.size()) {
    std::fprintf(stderr, "dsekp edge: ready (subscribed to %zu topics)\n", client->subacks_);
    if (client->on_ready_) client->on_ready_();
  }
}

void MqttClient::on_disconnect(mosquitto*, void* self, int rc) {
  auto* client = static_cast<MqttClient*>(self);
  client->connected_ = false;
  if (rc != 0) std::fprintf(stderr, "dsekp edge: connection lost, reconnecting\n");
}

void MqttClient::on_message(mosquitto*, void* self, const mosquitto_message* message) {
  auto* client = static_cast<MqttClient*>(self);
  const ByteView payload(
      static_cast<const std::uint8_t*>(message->payload),
      message->payloadlen < 0 ? 0 : static_cast<std::size_t>(message->payloadlen));
  // The handler commits before returning; only then is the PUBACK written (see the header).
  client->handler_(message->topic, payload);
}

}  // namespace dsekp::edge::mqtt
