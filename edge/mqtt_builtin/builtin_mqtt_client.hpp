// The edge's built-in MQTT 5 client (`dsekp edge --mqtt-client builtin`): the transport contract
// (edge/transport/transport.hpp) kept without libmosquitto, for an edge whose cost per message
// is close to its cryptography.
//
// Why it exists: libmosquitto reads every PUBLISH with about four read(2) calls and writes every
// PUBACK (and a wake-up byte) on its own; at a system call of about a microsecond that is most of
// what a frame costs an edge that commits many frames at once (docs/PERFORMANCE.md, "Edge
// throughput"). This client reads its socket 64 KiB at a time, hands each whole packet to the
// burst, and after the burst's end writes the burst's PUBACKs and its publishes with one write.
//
// What it keeps from the libmosquitto client (mqtt_client.hpp explains each): a persistent
// session (Clean Start 0 with a Session Expiry Interval on every CONNECT), QoS 1 subscriptions,
// PUBACKs only after the burst's end, the Receive Maximum of receive_maximum_for(batch_max), the
// Maximum Packet Size announced (and a packet over it refused from its header, before it is
// buffered), bursts cut by batch_max and batch_time and held by batch_wait, the stale
// subscriptions dropped and the subscriptions renewed on every CONNACK, the availability topic
// (online on CONNACK, offline before a clean DISCONNECT and as the will), reconnects with
// exponential backoff, publishes from any thread, and a fail-stop when a handler throws.
//
// Its own rules: QoS 1 publishes stay in flight until the broker's PUBACK, at most the broker's
// Receive Maximum (and kMaxInFlight) at a time, in order; after a reconnect they go again before
// anything new, with their packet ids and DUP when the broker kept the session, as new publishes
// when it did not (logged: what it queued for the edge is gone too). A publish the broker said it
// cannot take (over its Maximum Packet Size, above its Maximum QoS, retained where it has no
// retained messages) is dropped with an error instead of being sent, and one sent again
// kMaxSends times without a PUBACK is dropped too, so that no single publish can keep every
// connection failing. publish() refuses topics with wildcards or NUL, and refuses anything once
// kMaxPending publishes wait. Keep-alive: a PINGREQ when either direction was idle for the
// keep-alive interval (the broker's Server Keep Alive if it sets one), and the connection is given
// up when no packet came for one and a half intervals. A packet the standard calls malformed, or
// one this client never asked for (QoS 2, a Topic Alias), ends the connection with the rule it
// broke in the log; the broker then redelivers what was not acknowledged. A subscription granted
// at QoS 0 or refused is logged as an error by name (its messages would not be redelivered).
// stop() returns within a few seconds: the DISCONNECT and the offline state get kStopGrace; if the
// offline state cannot go out, the DISCONNECT asks the broker to publish the will instead.
//
// Not supported (start() refuses them by name): TLS, MQTT 3.1.1. Use the libmosquitto client
// for those.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dsekp/bytes.hpp"
#include "edge/mqtt/mqtt_options.hpp"
#include "edge/mqtt_builtin/receive_buffer.hpp"
#include "edge/transport/handler_guard.hpp"
#include "edge/transport/transport.hpp"

namespace dsekp::edge::mqtt_builtin {

class BuiltinMqttClient final : public transport::Transport {
 public:
  /// Our QoS 1 publishes in flight at most, whatever the broker's Receive Maximum: packet ids
  /// then never run out.
  static constexpr std::size_t kMaxInFlight = 1024;
  /// Publishes waiting to be written at most (publish() refuses more).
  static constexpr std::size_t kMaxPending = 65536;
  /// Connections a QoS 1 publish is written to before it is dropped without a PUBACK.
  static constexpr unsigned kMaxSends = 5;

  explicit BuiltinMqttClient(mqtt::MqttOptions options);
  ~BuiltinMqttClient() override;
  BuiltinMqttClient(const BuiltinMqttClient&) = delete;
  BuiltinMqttClient& operator=(const BuiltinMqttClient&) = delete;

  [[nodiscard]] bool start(transport::TransportHandlers handlers, std::string& error) override;
  void stop() noexcept override;
  /// Queued (also while disconnected) and written by the loop after the current burst's end.
  /// False for QoS above 1, a topic that is empty, has a wildcard or NUL or is over 65,535
  /// bytes, correlation data over 65,535 bytes, kMaxPending publishes waiting, or no memory.
  bool publish(const std::string& topic, ByteView payload, int qos = 1, bool retain = false,
               ByteView correlation_data = {}) noexcept override;
  [[nodiscard]] bool connected() const noexcept override { return connected_.load(); }
  [[nodiscard]] std::chrono::milliseconds loop_stalled_for() const noexcept override {
    return handler_clock_.inside_for();
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Outgoing {
    std::string topic;
    std::vector<std::uint8_t> payload;
    std::uint8_t qos = 1;
    bool retain = false;
    std::vector<std::uint8_t> correlation_data;
    std::uint16_t packet_id = 0;  // a resend's id in the session the broker kept; 0: a new one
    bool dup = false;             // a resend in the session the broker kept
    unsigned sends = 0;           // times written to a connection
  };
  // Why a connection ended; "" for a stop.
  struct Ending {
    std::string why;
    bool accepted = false;  // a CONNACK accepted it
  };

  void run();              // the loop thread: connect, serve, back off, again
  Ending serve(int sock);  // one connection, from CONNECT to its end
  bool open_session(int sock, std::string& why);  // CONNECT .. accepting CONNACK
  bool read_burst(int sock, std::string& why);    // false: the connection is over
  bool handle_packet(std::uint8_t first, ByteView body, std::string& why);
  bool handle_publish(std::uint8_t first, ByteView body, std::string& why);
  void end_burst();
  bool wait_for_more(int sock, Clock::time_point started);
  void take_queued_publishes();  // the queue from publish() -> in flight / the output
  void send_in_flight_again(bool session_present);
  /// Whether this connection may send `o` at all (its size, QoS and retain flag against the
  /// CONNACK); logs why not.
  bool broker_takes(const Outgoing& o);
  bool flush(int sock, std::string& why);  // writes out_ whole
  bool send_all(int sock, ByteView bytes, std::string& why);
  void wake() noexcept;
  void pause(unsigned seconds);
  std::uint16_t next_packet_id();
  /// The largest packet taken from the broker: the Maximum Packet Size announced, if any.
  [[nodiscard]] std::uint32_t receive_limit() const noexcept;

  mqtt::MqttOptions options_;
  transport::TransportHandlers handlers_;
  transport::HandlerClock handler_clock_;
  int wake_fd_ = -1;
  std::atomic<bool> started_{false};
  bool ever_started_ = false;            // a stopped client is not started again
  std::atomic<std::size_t> pending_{0};  // publishes accepted and not yet written or dropped
  std::thread thread_;
  std::atomic<std::thread::id> loop_thread_{};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> connected_{false};
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;

  std::mutex queue_mutex_;
  std::deque<Outgoing> queued_;  // publish() -> the loop (guarded by queue_mutex_)

  // The loop thread's own state.
  ReceiveBuffer in_;                // bytes read and not yet handled
  std::vector<std::uint8_t> out_;   // bytes to write after the burst's end
  std::deque<Outgoing> in_flight_;  // our QoS 1 publishes the broker has not acknowledged
  std::deque<Outgoing> waiting_;    // publishes not written yet, oldest first
  std::uint16_t last_packet_id_ = 0;
  std::uint16_t subscribe_id_ = 0;    // the SUBSCRIBE whose SUBACK makes the client ready
  std::uint16_t unsubscribe_id_ = 0;  // the UNSUBSCRIBE of the stale filters
  // What the broker's CONNACK said this connection may send.
  std::uint16_t broker_receive_maximum_ = 65535;
  std::uint32_t broker_maximum_packet_size_ = 0;
  std::uint8_t broker_maximum_qos_ = 2;
  bool broker_retain_available_ = true;
  std::chrono::milliseconds keep_alive_{0};
  Clock::time_point last_sent_{};
  Clock::time_point last_received_{};
  bool ping_outstanding_ = false;
  bool accepted_before_ = false;  // a CONNACK accepted an earlier connection of this client
  Clock::time_point stop_by_{};   // set once stopping: what stop() may still take
  bool in_burst_ = false;
  bool answer_pending_ = false;
  std::size_t burst_count_ = 0;
  bool burst_cut_ = false;  // batch_max ended the burst inside a read
  // The last burst emptied the socket after kBacklogBurst messages (the .cpp: a pause follows).
  bool backlog_ = false;
  bool burst_drained_ = false;  // the last burst ended because the socket was empty
  std::uint64_t bursts_ = 0;
  std::uint64_t messages_ = 0;
};

}  // namespace dsekp::edge::mqtt_builtin
