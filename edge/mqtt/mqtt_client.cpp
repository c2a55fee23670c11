// MqttClient over libmosquitto (see mqtt_client.hpp for the settings and why).
#include "edge/mqtt/mqtt_client.hpp"
#include "edge/logging/edge_logger.hpp"

#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
// The loop's wait for socket activity, ms: also the keep-alive check's resolution.
constexpr int kLoopTimeoutMs = 200;

void set_cork(int sock, bool on) noexcept {
  const int value = on ? 1 : 0;
  // Not TCP (a Unix socket): nothing to do, and the failure changes nothing.
  (void)::setsockopt(sock, IPPROTO_TCP, TCP_CORK, &value, sizeof value);
}

bool readable_now(int sock) {
  pollfd p{sock, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

SSL* ssl_of(mosquitto* mosq) {
  return static_cast<SSL*>(mosquitto_ssl_get(mosq));
}

const char* version_name(int protocol) {
  return protocol == MQTT_PROTOCOL_V5 ? "5" : "3.1.1";
}

}  // namespace

std::string unverified_library_problem(int major, int minor, int revision) {
  const auto& v = kVerifiedLibmosquitto;
  if (major == v[0] && minor == v[1] && revision == v[2]) return {};
  return "libmosquitto " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(revision) + " at run time, but the edge's PUBACK-after-commit rests on " +
         "how libmosquitto " + std::to_string(v[0]) + "." + std::to_string(v[1]) + "." +
         std::to_string(v[2]) + " queues packets in threaded mode (edge/mqtt/mqtt_client.hpp); " +
         "check this release (ctest -R EdgeKillRestart) and then allow it with " +
         "--allow-unverified-libmosquitto";
}

MqttClient::MqttClient(MqttOptions options) : options_(std::move(options)) {
  if (options_.batch_max < 1) options_.batch_max = 1;
}

MqttClient::~MqttClient() {
  stop();
  if (mosq_ != nullptr) mosquitto_destroy(mosq_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void MqttClient::wake() noexcept {
  if (wake_fd_ < 0) return;
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

bool MqttClient::start(transport::TransportHandlers handlers, std::string& error) {
  if (started_ || mosq_ != nullptr) {
    error = "the MQTT client was started before (a stopped client is not started again)";
    return false;
  }
  if (!handlers.message) {
    error = "the MQTT client needs a message handler";
    return false;
  }
  handlers_ = std::move(handlers);
  if (open_and_run(error)) return true;
  // A failed start leaves nothing behind, so it can be tried again.
  if (mosq_ != nullptr) mosquitto_destroy(mosq_);
  mosq_ = nullptr;
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
  return false;
}

bool MqttClient::open_and_run(std::string& error) {
  init_library_once();
  int major = 0, minor = 0, revision = 0;
  mosquitto_lib_version(&major, &minor, &revision);
  if (std::string problem = unverified_library_problem(major, minor, revision); !problem.empty()) {
    if (!options_.allow_unverified_library) {
      error = std::move(problem);
      return false;
    }
    logging::logger().warn("{} (allowed)", problem);
  }
  // clean_session = false: the persistent session that makes the broker queue for the edge
  // (with MQTT 5: clean start = false; the session expiry interval goes with each CONNECT).
  mosq_ = mosquitto_new(options_.client_id.c_str(), false, this);
  if (mosq_ == nullptr) {
    error = "mosquitto_new failed (empty client id or no memory)";
    return false;
  }
  protocol_ = options_.version == MqttVersion::v311 ? MQTT_PROTOCOL_V311 : MQTT_PROTOCOL_V5;
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, protocol_.load());
  // Threaded mode: packets queued inside a callback (the PUBACK) or by another thread are only
  // written by our loop's mosquitto_loop_write (see the header).
  mosquitto_threaded_set(mosq_, true);
  // No Nagle: the edge writes a PUBACK and then the ACK frame back to back; with Nagle the second
  // small write waits for the broker's delayed TCP ACK (~40 ms on loopback, measured by the device
  // tests), which would show up as handshake latency that is not the protocol's.
  mosquitto_int_option(mosq_, MOSQ_OPT_TCP_NODELAY, 1);
  mosquitto_int_option(mosq_, MOSQ_OPT_RECEIVE_MAXIMUM, receive_maximum_for(options_.batch_max));
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
  if (const MqttAvailability& a = options_.availability; !a.topic.empty()) {
    const int rc = mosquitto_will_set(mosq_, a.topic.c_str(), static_cast<int>(a.offline.size()),
                                      a.offline.data(), 1, a.retain);
    if (rc != MOSQ_ERR_SUCCESS) {
      error = "the availability topic " + a.topic + ": " + mosquitto_strerror(rc);
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
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    error = "eventfd failed";
    return false;
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
  if (protocol_ == MQTT_PROTOCOL_V5) {
    mosquitto_property_add_int32(&props, MQTT_PROP_SESSION_EXPIRY_INTERVAL,
                                 options_.session_expiry_s);
    if (options_.maximum_packet_size > 0)
      mosquitto_property_add_int32(&props, MQTT_PROP_MAXIMUM_PACKET_SIZE,
                                   options_.maximum_packet_size);
  }
  // Blocking TCP connect + CONNECT; the CONNACK is read by mosquitto_loop.
  const int rc = mosquitto_connect_bind_v5(mosq_, options_.host.c_str(), options_.port,
                                           options_.keepalive_s, nullptr, props);
  mosquitto_property_free_all(&props);
  return rc;
}

std::chrono::milliseconds MqttClient::loop_stalled_for() const noexcept {
  return handler_clock_.inside_for();
}

void MqttClient::pause(unsigned seconds) {
  std::unique_lock lock(stop_mutex_);
  stop_cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return stopping_.load(); });
}

void MqttClient::run() {
  loop_thread_ = std::this_thread::get_id();
  unsigned delay = std::max(1u, options_.reconnect_min_s);
  bool reported = false;
  while (!stopping_) {
    int rc = connect_once();
    if (rc == MOSQ_ERR_SUCCESS) {
      connack_seen_ = false;
      rc = drive();
      const bool accepted = std::exchange(ever_accepted_, false);
      note_silent_close();
      if (accepted) {
        delay = std::max(1u, options_.reconnect_min_s);
        reported = false;
      }
      connected_ = false;
      // Failed before a CONNACK (e.g. the TLS handshake): say why once, not on every retry.
      if (!accepted && !stopping_ && !fall_back_ && !reported) {
        logging::logger().warn("connection to {}:{} failed: {} (retrying)", options_.host,
                               options_.port,
                               rc == MOSQ_ERR_ERRNO ? "connection closed" : mosquitto_strerror(rc));
        reported = true;
      }
    } else if (!reported) {
      logging::logger().warn("cannot connect to {}:{}: {} (retrying)", options_.host, options_.port,
                             rc == MOSQ_ERR_ERRNO ? "connection failed" : mosquitto_strerror(rc));
      reported = true;
    }
    if (stopping_) break;
    if (fall_back_) continue;  // at once, with 3.1.1
    pause(delay);
    delay = std::min(delay * 2, std::max(delay, options_.reconnect_max_s));
  }
}

// Some 3.1.1-only brokers (RabbitMQ 3.10's MQTT plugin, tests/broker_compat) close the
// connection on an MQTT 5 CONNECT without sending any CONNACK, so `auto` never hears a refusal.
// Two such closes in a row on plain TCP count as one: fall back to 3.1.1. Not over TLS, where a
// failed handshake also ends without a CONNACK and must not change the protocol.
void MqttClient::note_silent_close() {
  if (options_.version != MqttVersion::automatic || protocol_ != MQTT_PROTOCOL_V5 ||
      !options_.tls.ca_file.empty() || stopping_ || fall_back_ || connack_seen_) {
    silent_closes_ = 0;
    return;
  }
  if (++silent_closes_ < 2) return;
  silent_closes_ = 0;
  logging::logger().warn(
      "the broker closed two MQTT 5 connections without a CONNACK; falling back to MQTT 3.1.1");
  fall_back_ = true;
}

int MqttClient::drive() {
  std::chrono::steady_clock::time_point stop_deadline{};
  while (true) {
    const int sock = mosquitto_socket(mosq_);
    if (sock < 0) return MOSQ_ERR_NO_CONN;
    pollfd fds[2] = {
        {sock, static_cast<short>(POLLIN | (mosquitto_want_write(mosq_) ? POLLOUT : 0)), 0},
        {wake_fd_, POLLIN, 0}};
    // A burst cut by batch_max or batch_time may leave TLS records already decrypted inside
    // OpenSSL, which poll() cannot see: go on at once then.
    SSL* ssl = ssl_of(mosq_);
    const bool tls_pending = ssl != nullptr && SSL_pending(ssl) > 0;
    if (::poll(fds, 2, tls_pending ? 0 : kLoopTimeoutMs) < 0 && errno != EINTR)
      return MOSQ_ERR_ERRNO;
    if ((fds[1].revents & POLLIN) != 0) {
      std::uint64_t count = 0;
      (void)!::read(wake_fd_, &count, sizeof count);
    }
    int rc = MOSQ_ERR_SUCCESS;
    const std::uint64_t delivered_before = delivered_;
    handler_clock_.entered();
    if (tls_pending || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      rc = read_burst(sock);
    } else if ((fds[0].revents & POLLOUT) != 0 && ssl != nullptr &&
               SSL_is_init_finished(ssl) == 0) {
      // The TLS handshake wants to write: mosquitto_loop_read runs its next step
      // (net__socket_connect_tls), as mosquitto_loop does for a writable socket.
      rc = mosquitto_loop_read(mosq_, 1);
      end_batch();
    }
    handler_clock_.left();
    if (rc != MOSQ_ERR_SUCCESS) return rc;
    if (connected_) ever_accepted_ = true;
    // Only now, after the batch end (its commit), may the queued PUBACKs and ACKs go out.
    if (mosquitto_socket(mosq_) < 0) return MOSQ_ERR_NO_CONN;
    if (mosquitto_want_write(mosq_)) {
      // libmosquitto writes each queued packet with its own write(2): corked, a burst's PUBACKs
      // and ACKs leave as few segments instead of one each (on loopback each segment also costs
      // this thread the receiver's side of the stack). A lone message's PUBACK (with its ACK,
      // if any) is not worth the two system calls.
      const bool cork = delivered_ - delivered_before > 1;
      if (cork) set_cork(sock, true);
      rc = mosquitto_loop_write(mosq_, 1);
      if (cork) set_cork(sock, false);
      if (rc != MOSQ_ERR_SUCCESS) return rc;
    }
    rc = mosquitto_loop_misc(mosq_);  // keep-alive (a PINGREQ is written next round)
    if (rc != MOSQ_ERR_SUCCESS) return rc;
    if (stopping_) {
      // stop() queued a DISCONNECT; loop_write sends it and closes the socket.
      if (stop_deadline == std::chrono::steady_clock::time_point{})
        stop_deadline = std::chrono::steady_clock::now() + kStopGrace;
      else if (std::chrono::steady_clock::now() > stop_deadline)
        return MOSQ_ERR_SUCCESS;
    }
  }
}

int MqttClient::read_burst(int sock) {
  const auto started = std::chrono::steady_clock::now();
  batch_full_ = false;
  int rc = MOSQ_ERR_SUCCESS;
  while (true) {
    const std::uint64_t delivered_before = delivered_;
    rc = mosquitto_loop_read(mosq_, 1);
    if (rc != MOSQ_ERR_SUCCESS || mosquitto_socket(mosq_) < 0) break;
    if (batch_full_) break;
    if (options_.batch_time.count() > 0 &&
        std::chrono::steady_clock::now() - started >= options_.batch_time)
      break;
    // After a message, just read again: on an empty socket that read fails with EAGAIN and
    // delivers nothing, and only then is readability asked (a poll per message would cost a
    // system call each).
    if (delivered_ != delivered_before) continue;
    SSL* ssl = ssl_of(mosq_);
    if (readable_now(sock) || (ssl != nullptr && SSL_pending(ssl) > 0)) continue;
    if (!wait_for_more(sock, started)) break;
  }
  // Also after a lost connection: what was handled is committed; its PUBACKs are never written
  // and the broker redelivers (refused then as replays).
  end_batch();
  return rc;
}

// The batch wait (MqttOptions::batch_wait): an open batch nobody waits for stays open until a
// message comes or the wait, counted from the burst's start and never longer than batch_time,
// runs out. It ends early when a publish from another thread (or stop()) wakes the loop, and
// once the batch holds kBatchWaitMessages: a broker sends at most its in-flight window of
// unacknowledged messages, and a batch that has filled it would otherwise idle to the end of
// the wait with nothing able to arrive (a device account flooding a small window would slow
// every other device's handshake so).
bool MqttClient::wait_for_more(int sock, std::chrono::steady_clock::time_point started) {
  if (!in_batch_ || answer_pending_ || options_.batch_wait.count() <= 0 || stopping_ ||
      batch_count_ >= kBatchWaitMessages || protocol_ != MQTT_PROTOCOL_V5)
    return false;
  auto limit = options_.batch_wait;
  if (options_.batch_time.count() > 0) limit = std::min(limit, options_.batch_time);
  const auto left = limit - (std::chrono::steady_clock::now() - started);
  const auto left_ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  if (left_ms <= 0) return false;
  pollfd fds[2] = {{sock, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  if (::poll(fds, 2, static_cast<int>(left_ms)) <= 0) return false;
  return (fds[1].revents & POLLIN) == 0;  // the loop's next poll reads the wake-up
}

void MqttClient::end_batch() {
  if (!in_batch_) return;
  in_batch_ = false;
  answer_pending_ = false;
  ++batches_;
  messages_ += batch_count_;
  batch_count_ = 0;
  if (!handlers_.burst_end) return;
  guarded("batch end", [this] { handlers_.burst_end(); });
}

void MqttClient::stop() noexcept {
  if (!started_) return;
  started_ = false;
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  // Queued ahead of the DISCONNECT, so the broker has it before the connection ends (a clean
  // DISCONNECT discards the will).
  if (const MqttAvailability& a = options_.availability; !a.topic.empty() && connected_.load())
    mosquitto_publish(mosq_, nullptr, a.topic.c_str(), static_cast<int>(a.offline.size()),
                      a.offline.data(), 1, a.retain);
  // MQTT 5: a DISCONNECT without properties keeps the session expiry interval of the CONNECT.
  mosquitto_disconnect(mosq_);
  wake();
  if (thread_.joinable()) thread_.join();
  connected_ = false;
  if (batches_ > 0)
    logging::logger().info("{} messages in {} batches (mean {:.1f}, at most {})", messages_,
                           batches_, static_cast<double>(messages_) / static_cast<double>(batches_),
                           options_.batch_max);
}

bool MqttClient::publish(const std::string& topic, ByteView payload, int qos, bool retain,
                         ByteView correlation_data) noexcept {
  if (mosq_ == nullptr) return false;
  // Correlation data comes only with an MQTT 5 request, so the connection is MQTT 5 then.
  mosquitto_property* props = nullptr;
  if (!correlation_data.empty() &&
      mosquitto_property_add_binary(&props, MQTT_PROP_CORRELATION_DATA, correlation_data.data(),
                                    static_cast<std::uint16_t>(correlation_data.size())) !=
          MOSQ_ERR_SUCCESS)
    return false;
  const int rc =
      mosquitto_publish_v5(mosq_, nullptr, topic.c_str(), static_cast<int>(payload.size()),
                           payload.data(), qos, retain, props);
  mosquitto_property_free_all(&props);
  // From another thread the loop may be asleep in poll(): wake it to write the publish now.
  if (std::this_thread::get_id() != loop_thread_) wake();
  return rc == MOSQ_ERR_SUCCESS || rc == MOSQ_ERR_NO_CONN;  // queued for the reconnect
}

void MqttClient::on_connect(mosquitto* mosq, void* self, int rc, int flags,
                            const mqtt5__property* props) {
  auto* client = static_cast<MqttClient*>(self);
  client->guarded("connect", [&] { client->handle_connack(mosq, rc, flags, props); });
}

void MqttClient::handle_connack(mosquitto* mosq, int rc, int, const mqtt5__property*) {
  connack_seen_ = true;
  if (rc != 0) {
    // A 3.1.1-only broker answers an MQTT 5 CONNECT with its code 1 (unacceptable protocol
    // version); an MQTT 5 broker that does not want 5 with 132 (unsupported protocol version).
    if (options_.version == MqttVersion::automatic && protocol_ == MQTT_PROTOCOL_V5 &&
        (rc == 1 || rc == MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION)) {
      logging::logger().warn("the broker refused MQTT 5; falling back to MQTT 3.1.1");
      fall_back_ = true;
      return;
    }
    logging::logger().error(
        "broker refused the connection: {}",
        protocol_ == MQTT_PROTOCOL_V5 ? mosquitto_reason_string(rc) : mosquitto_connack_string(rc));
    return;
  }
  subacks_ = 0;
  for (const auto& topic : options_.stale_subscriptions) {
    const int s = mosquitto_unsubscribe(mosq, nullptr, topic.c_str());
    if (s != MOSQ_ERR_SUCCESS)
      logging::logger().error("unsubscribe {}: {}", topic, mosquitto_strerror(s));
  }
  for (const auto& topic : options_.subscriptions) {
    const int s = mosquitto_subscribe(mosq, nullptr, topic.c_str(), 1);
    if (s != MOSQ_ERR_SUCCESS)
      logging::logger().error("subscribe {}: {}", topic, mosquitto_strerror(s));
  }
  if (const MqttAvailability& a = options_.availability; !a.topic.empty())
    mosquitto_publish(mosq, nullptr, a.topic.c_str(), static_cast<int>(a.online.size()),
                      a.online.data(), 1, a.retain);
  connected_ = true;
  logging::logger().info("connected to {}:{} (MQTT {}{})", options_.host, options_.port,
                         version_name(protocol_), options_.tls.ca_file.empty() ? "" : ", TLS");
}

void MqttClient::on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted,
                              const mqtt5__property* props) {
  auto* client = static_cast<MqttClient*>(self);
  client->guarded("subscribe", [&] { client->handle_suback(mid, count, granted, props); });
}

void MqttClient::handle_suback(int, int count, const int* granted, const mqtt5__property*) {
  for (int i = 0; i < count; ++i)
    if (granted[i] > 1) logging::logger().error("the broker refused a subscription");
  // One line once every topic is subscribed: operators (and the tests) wait for it.
  if (++subacks_ == options_.subscriptions.size()) {
    logging::logger().info("ready (subscribed to {} topics)", subacks_);
    if (handlers_.ready) handlers_.ready();
  }
}

void MqttClient::on_disconnect(mosquitto*, void* self, int rc, const mqtt5__property*) {
  auto* client = static_cast<MqttClient*>(self);
  client->connected_ = false;
  if (rc == 0 || client->stopping_ || client->fall_back_) return;
  try {
    if (rc == MQTT_RC_SESSION_TAKEN_OVER) {
      // MQTT 5: another client connected with this client id. With the broker binding client
      // ids to user names (use_username_as_clientid) only a holder of this account can.
      logging::logger().error(
          "the broker closed the connection: session taken over (another client connected as "
          "client id {}); reconnecting",
          client->options_.client_id);
    } else {
      logging::logger().warn("connection lost, reconnecting");
    }
  } catch (...) {
    // Logging failed (no memory): the reconnect does not depend on it.
  }
}

void MqttClient::on_message(mosquitto*, void* self, const mosquitto_message* message,
                            const mqtt5__property* props) {
  auto* client = static_cast<MqttClient*>(self);
  client->guarded("message", [&] { client->handle_message(message, props); });
}

void MqttClient::handle_message(const mosquitto_message* message, const mqtt5__property* props) {
  const ByteView payload(
      static_cast<const std::uint8_t*>(message->payload),
      message->payloadlen < 0 ? 0 : static_cast<std::size_t>(message->payloadlen));
  transport::MessageProperties properties;
  properties.retained = message->retain;
  // Devices send no properties: for them this costs one null check.
  char* response_topic = nullptr;
  void* correlation = nullptr;
  std::uint16_t correlation_size = 0;
  if (props != nullptr) {
    (void)mosquitto_property_read_string(props, MQTT_PROP_RESPONSE_TOPIC, &response_topic, false);
    (void)mosquitto_property_read_binary(props, MQTT_PROP_CORRELATION_DATA, &correlation,
                                         &correlation_size, false);
    if (response_topic != nullptr) properties.response_topic = response_topic;
    if (correlation != nullptr)
      properties.correlation_data =
          ByteView(static_cast<const std::uint8_t*>(correlation), correlation_size);
  }
  struct Free {
    char* text;
    void* binary;
    ~Free() {
      std::free(text);
      std::free(binary);
    }
  } const free_properties{response_topic, correlation};
  // The PUBACK is queued already; our loop writes it only after the batch end (see the header).
  if (!in_batch_) {
    in_batch_ = true;
    batch_count_ = 0;
  }
  ++delivered_;
  if (handlers_.message(message->topic, payload, properties) ==
      transport::BurstWait::answer_pending)
    answer_pending_ = true;
  // loop_read may read several packets per call: a full batch is ended here, still before any
  // write.
  if (++batch_count_ >= options_.batch_max) {
    end_batch();
    batch_full_ = true;
  }
}

}  // namespace dsekp::edge::mqtt
