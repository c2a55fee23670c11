// The PubSubClient stand-in (stand_ins/PubSubClient.h) over libmosquitto.
#include <mosquitto.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "stand_ins/PubSubClient.h"

namespace {
constexpr unsigned kMaxHeaderSize = 5;  // PubSubClient's MQTT_MAX_HEADER_SIZE

struct LibraryInit {
  LibraryInit() { mosquitto_lib_init(); }
  ~LibraryInit() { mosquitto_lib_cleanup(); }
};
}  // namespace

PubSubClient::PubSubClient(WiFiClient&) {
  static LibraryInit init;
}

PubSubClient::~PubSubClient() {
  if (mosq_ != nullptr) {
    mosquitto_disconnect(mosq_);
    mosquitto_destroy(mosq_);
  }
}

PubSubClient& PubSubClient::setServer(const char* host, uint16_t port) {
  host_ = host;
  port_ = port;
  if (const char* override_port = std::getenv("SKETCH_BROKER_PORT"))
    port_ = static_cast<uint16_t>(std::stoul(override_port));
  return *this;
}

PubSubClient& PubSubClient::setCallback(Callback callback) {
  callback_ = std::move(callback);
  return *this;
}

boolean PubSubClient::setBufferSize(uint16_t size) {
  if (size == 0) return false;
  buffer_size_ = size;
  return true;
}

void PubSubClient::on_message(mosquitto*, void* self, const mosquitto_message* message) {
  auto* client = static_cast<PubSubClient*>(self);
  const unsigned topic_len = static_cast<unsigned>(std::strlen(message->topic));
  // PubSubClient reads a whole packet into its buffer: a larger one is dropped.
  if (kMaxHeaderSize + 2 + topic_len + static_cast<unsigned>(message->payloadlen) >
      client->buffer_size_)
    return;
  if (!client->callback_) return;
  std::string topic(message->topic);
  std::vector<uint8_t> payload(static_cast<const uint8_t*>(message->payload),
                               static_cast<const uint8_t*>(message->payload) + message->payloadlen);
  client->callback_(topic.data(), payload.data(), static_cast<unsigned>(payload.size()));
}

boolean PubSubClient::connect(const char* id, const char* user, const char* pass) {
  if (mosq_ != nullptr) mosquitto_destroy(mosq_);
  mosq_ = mosquitto_new(id, true, this);
  if (mosq_ == nullptr) return false;
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  mosquitto_message_callback_set(mosq_, &PubSubClient::on_message);
  mosquitto_connect_callback_set(mosq_, [](mosquitto*, void* self, int rc) {
    static_cast<PubSubClient*>(self)->connected_ = rc == 0;
  });
  mosquitto_disconnect_callback_set(mosq_, [](mosquitto*, void* self, int) {
    static_cast<PubSubClient*>(self)->connected_ = false;
  });
  if (user != nullptr) mosquitto_username_pw_set(mosq_, user, pass);
  connected_ = false;
  if (host_ == nullptr || mosquitto_connect(mosq_, host_, port_, 15) != MOSQ_ERR_SUCCESS)
    return false;
  // PubSubClient's connect() blocks until the CONNACK: so does this (at most 5 s).
  for (int i = 0; i < 500 && !connected_; ++i) {
    if (mosquitto_loop(mosq_, 10, 1) != MOSQ_ERR_SUCCESS) break;
  }
  return connected_;
}

boolean PubSubClient::connected() {
  return mosq_ != nullptr && connected_;
}

boolean PubSubClient::publish(const char* topic, const uint8_t* payload, unsigned int length) {
  if (!connected()) return false;
  if (kMaxHeaderSize + 2 + std::strlen(topic) + length > buffer_size_) return false;
  return mosquitto_publish(mosq_, nullptr, topic, static_cast<int>(length), payload, 0, false) ==
         MOSQ_ERR_SUCCESS;
}

boolean PubSubClient::subscribe(const char* topic, uint8_t qos) {
  if (!connected() || qos > 1) return false;
  return mosquitto_subscribe(mosq_, nullptr, topic, qos) == MOSQ_ERR_SUCCESS;
}

boolean PubSubClient::loop() {
  if (mosq_ == nullptr) return false;
  if (mosquitto_loop(mosq_, 10, 1) != MOSQ_ERR_SUCCESS) connected_ = false;
  return connected_;
}
