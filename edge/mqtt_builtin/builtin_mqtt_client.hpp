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
// Receive Maximum at a time, in order; after a reconnect they are sent again (with DUP when the
// broker kept the session) before anything new. Keep-alive: a PINGREQ when nothing was sent for
// the keep-alive interval (the broker's Server Keep Alive if it sets one), and the connection is
// given up when no packet came for one and a half intervals. A packet the standard calls
// malformed, or one this client never asked for (QoS 2, a Topic Alias), ends the connection
// with the rule it broke in the log; the broker then redelivers what was not acknowledged.
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
  explicit BuiltinMqttClient(mqtt::MqttOptions options);
  ~BuiltinMqttClient() override;
  BuiltinMqttClient(const BuiltinMqttClient&) = delete;
  BuiltinMqttClient& operator=(const BuiltinMqttClient&) = delete;

  [[nodiscard]] bool start(transport::TransportHandlers handlers, std::string& error) override;
  void stop() noexcept override;
  /// Queued (also while disconnected) and written by the loop after the current burst's end.
  /// False for QoS above 1, a topic or correlation data over 65,535 bytes, or no memory.
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
  };
  struct InFlight {
    std::uint16_t packet_id = 0;
    std::vector<std::uint8_t> packet;  // the encoded PUBLISH, sent again after a reconnect
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
  void send_in_flight_again(bool dup);
  bool flush(int sock, std::string& why);  // writes out_ whole
  void wake() noexcept;
  void pause(unsigned seconds);
  [[noreturn]] void handler_threw(const char* where, const char* what) noexcept;
  std::uint16_t next_packet_id();
  /// The largest packet taken from the broker: the Maximum Packet Size announced, if any.
  [[nodiscard]] std::uint32_t receive_limit() const noexcept;

  mqtt::MqttOptions options_;
  transport::TransportHandlers handlers_;
  transport::HandlerClock handler_clock_;
  int wake_fd_ = -1;
  bool started_ = false;
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
  std::deque<InFlight> in_flight_;  // our QoS 1 publishes the broker has not acknowledged
  std::deque<Outgoing> waiting_;    // QoS 1 publishes over the broker's Receive Maximum
  std::uint16_t last_packet_id_ = 0;
  std::uint16_t subscribe_id_ = 0;  // the SUBSCRIBE whose SUBACK makes the client ready
  std::uint16_t broker_receive_maximum_ = 65535;
  std::uint32_t broker_maximum_packet_size_ = 0;
  std::chrono::seconds keep_alive_{0};
  Clock::time_point last_sent_{};
  Clock::time_point last_received_{};
  bool in_burst_ = false;
  bool answer_pending_ = false;
  std::size_t burst_count_ = 0;
  bool burst_cut_ = false;  // batch_max ended the burst inside a read
  std::uint64_t bursts_ = 0;
  std::uint64_t messages_ = 0;
};

}  // namespace dsekp::edge::mqtt_builtin
