// MqttClient over libmosquitto (see mqtt_client.hpp for the settings and why).
#include "edge/mqtt/mqtt_client.hpp"

#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <algorithm>
#include <chrono>
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

// How long stop() lets the loop write the DISCONNECT before giving up on it.
constexpr auto kStopGrace = std::chrono::seconds(2);
// mosquitto_loop's wait for socket activity, ms; also how often stop() is noticed.
constexpr int kLoopTimeoutMs = 200;

const char* version_name(int protocol) {
  return protocol == MQTT_PROTOCOL_V5 ? "5" : "3.1.1";
}

}  // namespace

bool parse_mqtt_version(std::string_view text, MqttVersion& out) noexcept {
  if (text == "auto") {
    out = MqttVersion::automatic;
  } else if (text == "5") {
    out = MqttVersion::v5;
  } else if (text == "3.1.1" || text == "311") {
    out = MqttVersion::v311;
  } else {
    return false;
  }
  return true;
}

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
  // clean_session = false: the persistent session that makes the broker queue for the edge
  // (with MQTT 5: clean start = false; the session expiry interval goes with each CONNECT).
  mosq_ = mosquitto_new(options_.client_id.c_str(), false, this);
  if (mosq_ == nullptr) {
    error = "mosquitto_new failed (empty client id or no memory)";
    return false;
  }
  protocol_ = options_.version == MqttVersion::v311 ? MQTT_PROTOCOL_V311 : MQTT_PROTOCOL_V5;
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, protocol_.load());
  // Our own thread drives mosquitto_loop: threaded mode, so that packets queued inside a callback
  // (the PUBACK) are written by the loop after the callback returns (see the header).
  mosquitto_threaded_set(mosq_, true);
  // No Nagle: the edge writes a PUBACK and then the ACK frame back to back; with Nagle the second
  // small write waits for the broker's delayed TCP ACK (~40 ms on loopback, measured by the device
  // tests), which would show up as handshake latency that is not the protocol's.
  mosquitto_int_option(mosq_, MOSQ_OPT_TCP_NODELAY, 1);
  // The v5 callbacks are called for 3.1.1 connections too (libmosquitto calls every callback set).
  mosquitto_connect_v5_callback_set(mosq_, &MqttClient::on_connect);
  mosquitto_disconnect_v5_callback_set(mosq_, &MqttClient::on_disconnect);
  mosquitto_message_v5_callback_set(mosq_, &MqttClient::on_message);
  mosquitto_subscribe_v5_callback_set(mosq_, &MqttClient::on_subscribe);
  if (!options_.username.empty()) {
    const int rc =
        mosquitto_username_pw_set(mosq_, options_.username.c_str(), options_.password.c_str());
    if (rc != MOSQ_ERR_SUCCESS) {
      error = std::string("mosquitto_username_pw_set: ") + mosquitto_strerror(rc);
      return false;
    }
  }
  const MqttTls& tls = options_.tls;
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    error = "TLS: a client certificate needs its key and a key its certificate";
    return false;
  }
  if (tls.ca_file.empty() && (!tls.cert_file.empty() || tls.insecure)) {
    error = "TLS: a client certificate or tls_insecure needs a CA file (--tls-ca)";
    return false;
  }
  if (!tls.ca_file.empty()) {
    const auto opt = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
    // Checks that the files exist and are readable; the certificates are loaded on connect.
    int rc = mosquitto_tls_set(mosq_, tls.ca_file.c_str(), nullptr, opt(tls.cert_file),
                               opt(tls.key_file), nullptr);
    if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_tls_insecure_set(mosq_, tls.insecure);
    if (rc != MOSQ_ERR_SUCCESS) {
      error = std::string("TLS: ") + mosquitto_strerror(rc) +
              (rc == MOSQ_ERR_INVAL ? " (a file is missing or unreadable)" : "");
      return false;
    }
  }
  stopping_ = false;
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    error = std::string("cannot start the MQTT thread: ") + e.what();
    return false;
  }
  started_ = true;
  return true;
}

int MqttClient::connect_once() {
  if (fall_back_) {
    fall_back_ = false;
    protocol_ = MQTT_PROTOCOL_V311;
    mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  }
  mosquitto_property* props = nullptr;
  if (protocol_ == MQTT_PROTOCOL_V5)
    mosquitto_property_add_int32(&props, MQTT_PROP_SESSION_EXPIRY_INTERVAL,
                                 options_.session_expiry_s);
  // Blocking TCP connect + CONNECT; the CONNACK is read by mosquitto_loop.
  const int rc = mosquitto_connect_bind_v5(mosq_, options_.host.c_str(), options_.port,
                                           options_.keepalive_s, nullptr, props);
  mosquitto_property_free_all(&props);
  return rc;
}

void MqttClient::pause(unsigned seconds) {
  std::unique_lock lock(stop_mutex_);
  stop_cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return stopping_.load(); });
}

void MqttClient::run() {
  unsigned delay = std::max(1u, options_.reconnect_min_s);
  bool reported = false;
  while (!stopping_) {
    int rc = connect_once();
    if (rc == MOSQ_ERR_SUCCESS) {
      std::chrono::steady_clock::time_point stop_deadline{};
      bool accepted = false;
      while (true) {
        rc = mosquitto_loop(mosq_, kLoopTimeoutMs, 1);
        if (rc != MOSQ_ERR_SUCCESS) break;
        accepted = accepted || connected_;
        if (connected_) {
          delay = std::max(1u, options_.reconnect_min_s);
          reported = false;
        }
        if (stopping_) {
          // stop() queued a DISCONNECT; the loop writes it and then reports NO_CONN.
          if (stop_deadline == std::chrono::steady_clock::time_point{})
            stop_deadline = std::chrono::steady_clock::now() + kStopGrace;
          else if (std::chrono::steady_clock::now() > stop_deadline)
            break;
        }
      }
      connected_ = false;
      // Failed before a CONNACK (e.g. the TLS handshake): say why once, not on every retry.
      if (!accepted && !stopping_ && !fall_back_ && !reported) {
        std::fprintf(stderr, "dsekp edge: connection to %s:%u failed: %s (retrying)\n",
                     options_.host.c_str(), static_cast<unsigned>(options_.port),
                     rc == MOSQ_ERR_ERRNO ? "connection closed" : mosquitto_strerror(rc));
        reported = true;
      }
    } else if (!reported) {
      std::fprintf(stderr, "dsekp edge: cannot connect to %s:%u: %s (retrying)\n",
                   options_.host.c_str(), static_cast<unsigned>(options_.port),
                   rc == MOSQ_ERR_ERRNO ? "connection failed" : mosquitto_strerror(rc));
      reported = true;
    }
    if (stopping_) break;
    if (fall_back_) continue;  // at once, with 3.1.1
    pause(delay);
    delay = std::min(delay * 2, std::max(delay, options_.reconnect_max_s));
  }
}

void MqttClient::stop() noexcept {
  if (!started_) return;
  started_ = false;
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  // MQTT 5: a DISCONNECT without properties keeps the session expiry interval of the CONNECT.
  mosquitto_disconnect(mosq_);
  if (thread_.joinable()) thread_.join();
  connected_ = false;
}

bool MqttClient::publish(const std::string& topic, ByteView payload, int qos) noexcept {
  if (mosq_ == nullptr) return false;
  const int rc = mosquitto_publish(mosq_, nullptr, topic.c_str(), static_cast<int>(payload.size()),
                                   payload.data(), qos, false);
  return rc == MOSQ_ERR_SUCCESS || rc == MOSQ_ERR_NO_CONN;  // queued for the reconnect
}

void MqttClient::on_connect(mosquitto* mosq, void* self, int rc, int, const mqtt5__property*) {
  auto* client = static_cast<MqttClient*>(self);
  if (rc != 0) {
    // A 3.1.1-only broker answers an MQTT 5 CONNECT with its code 1 (unacceptable protocol
    // version); an MQTT 5 broker that does not want 5 with 132 (unsupported protocol version).
    if (client->options_.version == MqttVersion::automatic &&
        client->protocol_ == MQTT_PROTOCOL_V5 &&
        (rc == 1 || rc == MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION)) {
      std::fprintf(stderr, "dsekp edge: the broker refused MQTT 5; falling back to MQTT 3.1.1\n");
      client->fall_back_ = true;
      return;
    }
    std::fprintf(stderr, "dsekp edge: broker refused the connection: %s\n",
                 client->protocol_ == MQTT_PROTOCOL_V5 ? mosquitto_reason_string(rc)
                                                       : mosquitto_connack_string(rc));
    return;
  }
  client->subacks_ = 0;
  for (const auto& topic : client->options_.subscriptions) {
    const int s = mosquitto_subscribe(mosq, nullptr, topic.c_str(), 1);
    if (s != MOSQ_ERR_SUCCESS)
      std::fprintf(stderr, "dsekp edge: subscribe %s: %s\n", topic.c_str(), mosquitto_strerror(s));
  }
  client->connected_ = true;
  std::fprintf(stderr, "dsekp edge: connected to %s:%u (MQTT %s%s)\n",
               client->options_.host.c_str(), static_cast<unsigned>(client->options_.port),
               version_name(client->protocol_),
               client->options_.tls.ca_file.empty() ? "" : ", TLS");
}

void MqttClient::on_subscribe(mosquitto*, void* self, int, int count, const int* granted,
                              const mqtt5__property*) {
  auto* client = static_cast<MqttClient*>(self);
  for (int i = 0; i < count; ++i)
    if (granted[i] > 1) std::fprintf(stderr, "dsekp edge: the broker refused a subscription\n");
  // One line once every topic is subscribed: operators (and the tests) wait for it.
  if (++client->subacks_ == client->options_.subscriptions.size()) {
    std::fprintf(stderr, "dsekp edge: ready (subscribed to %zu topics)\n", client->subacks_);
    if (client->on_ready_) client->on_ready_();
  }
}

void MqttClient::on_disconnect(mosquitto*, void* self, int rc, const mqtt5__property*) {
  auto* client = static_cast<MqttClient*>(self);
  client->connected_ = false;
  if (rc != 0 && !client->stopping_ && !client->fall_back_)
    std::fprintf(stderr, "dsekp edge: connection lost, reconnecting\n");
}

void MqttClient::on_message(mosquitto*, void* self, const mosquitto_message* message,
                            const mqtt5__property*) {
  auto* client = static_cast<MqttClient*>(self);
  const ByteView payload(
      static_cast<const std::uint8_t*>(message->payload),
      message->payloadlen < 0 ? 0 : static_cast<std::size_t>(message->payloadlen));
  // The handler commits before returning; only then is the PUBACK written (see the header).
  client->handler_(message->topic, payload);
}

}  // namespace dsekp::edge::mqtt
