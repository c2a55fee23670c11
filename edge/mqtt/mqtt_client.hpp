// The edge's MQTT connection: a small wrapper over libmosquitto, MQTT 5 where the broker
// supports it (else 3.1.1), optionally over TLS.
//
// Why these settings (ARCHITECTURE.md "The edge's durability"):
//   * clean_session = false with a fixed client id: the broker keeps the edge's subscriptions and
//     queues QoS 1 messages for it while it is down, so frames sent during a restart arrive after.
//   * QoS 1 subscriptions and publishes: at-least-once; the edge's store makes it exactly-once.
//   * MQTT 5: clean start = false plus a Session Expiry Interval (default 0xFFFFFFFF, "never"),
//     which is what 3.1.1's clean_session = false means; without the interval an MQTT 5 session
//     would end with the connection. libmosquitto sends CONNECT properties only on the connect
//     call that is given them (its own reconnect sends none), so this client runs its own
//     connect/reconnect loop and passes them on every connection. `auto` tries MQTT 5 first and
//     falls back to 3.1.1 when the broker's CONNACK says the version is not supported, or when
//     the broker closes two MQTT 5 connections in a row without any CONNACK (plain TCP only).
//   * PUBACK only after the commit, and one commit per burst of messages (batches). Our thread
//     drives libmosquitto itself instead of calling mosquitto_loop(): poll() on the socket (and
//     a wake-up eventfd), then mosquitto_loop_read() again and again while the socket stays
//     readable (at most batch_max messages, at most batch_time; with batch_wait a little
//     longer for more, see there), each message going to the handler; then the batch-end
//     handler (the daemon commits the batch there and publishes its ACKs); only then
//     mosquitto_loop_write(), which writes the PUBACKs libmosquitto queued for the burst and
//     the ACKs; then mosquitto_loop_misc() (keep-alive). Verified in the
//     libmosquitto 2.0.11 source (Debian's `apt-get source mosquitto`), with
//     mosquitto_threaded_set(true) (mosq->threaded = mosq_ts_external, lib/thread_mosq.c):
//       - lib/handle_publish.c handle__publish(): for QoS 1, send__puback() BEFORE on_message /
//         on_message_v5 (with in_callback = true around the callbacks);
//       - send__puback() -> send__command_with_mid() -> packet__queue() (lib/packet_mosq.c):
//         appends to out_packet and writes one byte to the internal socketpair; it calls
//         packet__write() only `if(mosq->in_callback == false && mosq->threaded ==
//         mosq_ts_none)`, i.e. never in threaded mode. The same holds for every packet queued
//         from a callback or another thread (mosquitto_publish, PINGREQ from loop_misc's
//         mosquitto__check_keepalive, DISCONNECT);
//       - packet__write() is the only caller of net__write() (the one place bytes go to the
//         socket, SSL_write included), and its only callers are packet__queue() (guarded as
//         above) and mosquitto_loop_write() (lib/loop.c);
//       - mosquitto_loop_read() (lib/loop.c) only calls packet__read() (or the TLS handshake
//         step net__socket_connect_tls() while connecting): it never writes a PUBACK or a
//         publish. It may read more than one packet per call (as many as msgs_out.queue_len +
//         msgs_in.queue_len, and on while SSL has pending data), so the batch-max cap is also
//         enforced in on_message, which ends a full batch itself.
//     So a SIGKILL before the batch end leaves all of the burst's messages unacknowledged and the
//     broker redelivers them; after the commit, they are refused as replays. Proven by
//     tests/edge_daemon/kill_restart_test.cpp. A library is only as good as that reading of its
//     source: start() asks libmosquitto its version and refuses any other release than the
//     one read (kVerifiedLibmosquitto) unless allow_unverified_library. batch_max = 1 gives one
//     commit per message. The MQTT 5 Receive Maximum sent with CONNECT is 2 * batch_max (at least
//     libmosquitto's default 20), or the broker would stop after 20 unacknowledged messages and
//     every batch would end in a round trip; with MQTT 3.1.1 the broker's max_inflight_messages
//     decides. Publishes from other threads (admin) are queued by libmosquitto and written by our
//     loop; publish() wakes the loop through the eventfd so they do not wait for the poll timeout.
//   * Oversized messages never reach the edge's memory: with MQTT 5 the CONNECT announces
//     maximum_packet_size (MQTT 5 3.1.2.11.4), and the broker drops any PUBLISH larger than that
//     instead of sending it (Mosquitto does; proven by tests/hostile/oversize_test.cpp).
//     libmosquitto itself would allocate whatever length a packet header claims before any callback
//     runs, so over MQTT 3.1.1 only the broker's own max_packet_size (`dsekp keys broker-config`
//     sets it) protects the edge.
//   * No exception crosses libmosquitto's C callbacks: one escaping a handler is caught at the
//     callback and handed to `fatal` (the daemon fail-stops there: nothing acknowledged).
//   * Reconnect with exponential backoff (reconnect_min_s doubling up to reconnect_max_s), done by
//     the loop thread; subscriptions are renewed on every CONNACK (harmless with a persistent
//     session, needed if the broker lost it).
//
// Threads: the handlers run on the client's loop thread, one message at a time, in arrival
// order. publish() may be called from any thread, including from inside the handlers.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "dsekp/bytes.hpp"
#include "edge/mqtt/mqtt_options.hpp"
#include "edge/transport/handler_guard.hpp"
#include "edge/transport/transport.hpp"

struct mosquitto;
struct mosquitto_message;
struct mqtt5__property;

namespace dsekp::edge::mqtt {

/// The libmosquitto release whose source the PUBACK-after-commit argument above was checked in.
inline constexpr int kVerifiedLibmosquitto[3] = {2, 0, 11};
/// Empty if libmosquitto `major.minor.revision` is the verified release; otherwise why the edge
/// should not rely on it without checking (start() refuses it unless allowed).
[[nodiscard]] std::string unverified_library_problem(int major, int minor, int revision);

/// The MQTT transport on libmosquitto (the default): see the top of this file for how it keeps the
/// transport contract (edge/transport/transport.hpp) on libmosquitto.
class MqttClient final : public transport::Transport {
 public:
  explicit MqttClient(MqttOptions options);
  ~MqttClient() override;
  MqttClient(const MqttClient&) = delete;
  MqttClient& operator=(const MqttClient&) = delete;

  [[nodiscard]] bool start(transport::TransportHandlers handlers, std::string& error) override;
  void stop() noexcept override;
  /// False if libmosquitto refused it (it queues while disconnected).
  bool publish(const std::string& topic, ByteView payload, int qos = 1, bool retain = false,
               ByteView correlation_data = {}) noexcept override;
  /// Whether the last CONNACK accepted the edge and no disconnect came since.
  [[nodiscard]] bool connected() const noexcept override { return connected_.load(); }
  /// Time inside the handlers (a burst of messages and its end, the commit); zero while the loop
  /// polls, writes or waits to reconnect.
  [[nodiscard]] std::chrono::milliseconds loop_stalled_for() const noexcept override;

 private:
  bool open_and_run(std::string& error);  // start()'s work: the client, then the loop thread
  void run();  // the loop thread: connect, loop, back off, reconnect until stop()
  int connect_once();
  void pause(unsigned seconds);
  int drive();               // one connection: poll, read bursts, write, keep-alive
  void note_silent_close();  // after drive(): counts CONNACK-less MQTT 5 closes (auto)
  int read_burst(int sock);
  void end_batch();
  bool wait_for_more(int sock, std::chrono::steady_clock::time_point started);
  void wake() noexcept;

  static void on_connect(mosquitto*, void* self, int rc, int flags, const mqtt5__property* props);
  static void on_disconnect(mosquitto*, void* self, int rc, const mqtt5__property* props);
  static void on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted,
                           const mqtt5__property* props);
  static void on_message(mosquitto*, void* self, const mosquitto_message* message,
                         const mqtt5__property* props);
  // The callbacks' bodies, each run through guarded() by its static callback.
  void handle_connack(mosquitto* mosq, int rc, int flags, const mqtt5__property* props);
  void handle_suback(int mid, int count, const int* granted, const mqtt5__property* props);
  void handle_message(const mosquitto_message* message, const mqtt5__property* props);
  /// Runs `body`; what it throws ends the process (no exception crosses libmosquitto).
  template <typename Body>
  void guarded(const char* where, Body&& body) noexcept {
    transport::run_handler(options_.fatal, where, std::forward<Body>(body));
  }

  MqttOptions options_;
  transport::TransportHandlers handlers_;
  int wake_fd_ = -1;  // eventfd: publish()/stop() from other threads interrupt the poll
  std::thread::id loop_thread_;
  bool in_batch_ = false;        // loop thread only
  bool batch_full_ = false;      // on_message ended a full batch (loop thread only)
  bool answer_pending_ = false;  // a message of the open batch waits for its end (loop thread only)
  std::size_t batch_count_ = 0;  // messages in the open batch (loop thread only)
  std::uint64_t delivered_ = 0;  // messages handed to the handler (loop thread only)
  bool ever_accepted_ = false;   // a CONNACK accepted this connection (loop thread only)
  // Totals, written by the loop thread, read by stop() after the join.
  std::uint64_t batches_ = 0;
  std::uint64_t messages_ = 0;
  mosquitto* mosq_ = nullptr;
  bool started_ = false;
  std::thread thread_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> connected_{false};
  std::atomic<int> protocol_{5};
  transport::HandlerClock handler_clock_;
  bool fall_back_ = false;     // auto: the broker refused MQTT 5 (loop thread only)
  bool connack_seen_ = false;  // any CONNACK on this connection, accepting or not (loop thread)
  // auto: MQTT 5 connections in a row that the broker closed without any CONNACK (loop thread)
  unsigned silent_closes_ = 0;
  std::size_t subacks_ = 0;  // SUBACKs since the last CONNACK (loop thread only)
};

}  // namespace dsekp::edge::mqtt
