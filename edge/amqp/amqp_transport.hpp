// The edge's uplink consumed from a RabbitMQ queue over AMQP 0-9-1 (`dsekp edge --amqp NODES`):
// the transport contract (edge/transport/transport.hpp) kept with explicit acknowledgements
// instead of MQTT PUBACKs, for a clustered broker tier. Devices still speak MQTT, to RabbitMQ's
// MQTT plugin on any node; the plugin publishes each message to the topic exchange amq.topic
// (amqp_topics.hpp) and PUBACKs it only once the queue has it, and the edge's durable quorum
// queue, bound to the edge's topics, holds it on a majority of the nodes until the edge
// acknowledges it. Several edges on one queue share its messages (with a shared session store).
//
// Why AMQP and not MQTT for the edge: RabbitMQ's MQTT plugin has no shared subscriptions and
// ties an MQTT session to the node it is on, while a quorum queue outlives any one node and
// hands an unacknowledged message to another consumer as soon as its consumer's connection ends.
//
// The contract, in AMQP terms: a burst is the deliveries already read (at most batch_max, for
// at most batch_time); after `burst_end` has returned (the commit), one basic.ack with
// `multiple` acknowledges the burst's last delivery tag and with it the whole burst. A process
// that dies earlier acknowledges nothing: the queue delivers the burst again, to this edge when
// it returns or to another one meanwhile. The broker's prefetch (basic.qos) is twice batch_max.
//
// Publishes (ACKs, downlinks, answers) go to amq.topic after the burst's acknowledgement, as
// persistent messages marked for MQTT QoS 1 (the plugin delivers them to the devices' MQTT
// subscriptions), in publisher-confirm mode: each stays queued until the broker confirms it and
// goes again on the next connection otherwise, so a node's death loses none (a device may see
// one twice; its replay check refuses the second). Connections go to the nodes in turn, the
// next one at once after a lost connection, then with exponential backoff.
//
// Not carried over AMQP (start() refuses them by name): retained publishes (RabbitMQ keeps
// retained messages in its MQTT plugin, per node) and an MQTT will; no received message is
// retained (AMQP consumers never get the plugin's retained copies) and none carries MQTT 5
// properties. The queue is declared by the edge (durable, x-queue-type quorum) and must not exist
// with other arguments.
#pragma once

#include <amqp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "edge/amqp/amqp_topics.hpp"
#include "edge/mqtt/mqtt_limits.hpp"
#include "edge/transport/handler_guard.hpp"
#include "edge/transport/transport.hpp"

namespace dsekp::edge::amqp {

struct AmqpOptions {
  std::vector<AmqpNode> nodes;  // tried in turn
  std::string vhost = "/";
  std::string username;  // required (RabbitMQ has no anonymous AMQP login)
  std::string password;
  std::string queue = "dsekp-uplink";
  std::string exchange = "amq.topic";
  std::vector<std::string> subscriptions;        // MQTT topic filters, bound to the queue
  std::vector<std::string> stale_subscriptions;  // filters an earlier configuration bound
  std::size_t batch_max = 1;                     // deliveries per burst, at most
  std::chrono::milliseconds batch_time{10};
  // AMQP heartbeats: a broker silent for two intervals (a frozen node) is given up.
  unsigned heartbeat_s = 10;
  unsigned reconnect_max_s = 30;
  transport::FatalHandler fatal;
};

class AmqpTransport final : public transport::Transport {
 public:
  /// Publishes waiting for the broker (queued or unconfirmed) at most; publish() refuses more.
  static constexpr std::size_t kMaxPending = 65536;
  /// A delivery's bytes handed to the handler, at most, plus one: a longer message reaches it
  /// cut to kMaxKeptBody + 1 bytes, which the service refuses as frame_too_large (the MQTT
  /// clients announce the same bound to the broker as their Maximum Packet Size).
  static constexpr std::size_t kMaxKeptBody = mqtt::kMaxMqttPacketSize;

  explicit AmqpTransport(AmqpOptions options);
  ~AmqpTransport() override;
  AmqpTransport(const AmqpTransport&) = delete;
  AmqpTransport& operator=(const AmqpTransport&) = delete;

  [[nodiscard]] bool start(transport::TransportHandlers handlers, std::string& error) override;
  void stop() noexcept override;
  bool publish(const std::string& topic, ByteView payload, int qos = 1, bool retain = false,
               ByteView correlation_data = {}) noexcept override;
  [[nodiscard]] bool connected() const noexcept override { return connected_; }
  [[nodiscard]] std::chrono::milliseconds loop_stalled_for() const noexcept override {
    return handler_clock_.inside_for();
  }

 private:
  struct Outgoing {
    std::string routing_key;
    std::vector<std::uint8_t> payload;
    std::uint8_t qos = 1;
    std::uint64_t confirm_tag = 0;  // the channel's publish sequence number once sent
    unsigned sends = 0;             // connections it went to, refusals included
  };

  void run();
  // One connection to `node`: set-up, then bursts until it fails or stop(); false with `why`.
  bool serve(const AmqpNode& node, bool& opened, std::string& why);
  bool open(const AmqpNode& node, std::string& why);
  // The quorum queue declared and bound to the subscriptions (stale bindings removed).
  bool declare_queue(std::string& why);
  bool read_burst(std::string& why);
  // A delivery's content into body_, at most kMaxKeptBody + 1 bytes of it (the rest is read and
  // dropped): memory stays bounded whatever size a publisher sent.
  bool read_content(std::string& why);
  // A frame other than a delivery (confirms, the broker closing the channel or connection).
  bool handle_other_frame(const amqp_frame_t& frame, std::string& why);
  void confirmed(std::uint64_t tag, bool multiple, bool negative);
  bool send_publishes(std::string& why);
  void close_connection(bool graceful) noexcept;
  void wake() noexcept;
  void pause(unsigned seconds);

  AmqpOptions options_;
  transport::TransportHandlers handlers_;
  transport::HandlerClock handler_clock_;
  amqp_connection_state_t conn_ = nullptr;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<std::thread::id> loop_thread_{};
  std::atomic<bool> started_{false};
  bool ever_started_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> connected_{false};
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;

  std::mutex queue_mutex_;
  std::deque<Outgoing> queued_;  // from publish(), any thread
  std::atomic<std::size_t> pending_{0};
  // Loop thread only: to send (again) and sent without a confirm, in order.
  std::deque<Outgoing> waiting_;
  std::deque<Outgoing> unconfirmed_;
  std::uint64_t publish_seq_ = 0;
  bool queue_ready_ = false;        // declared and bound by this process, consumed since
  bool blocked_ = false;            // connection.blocked: a resource alarm; publishes wait
  std::vector<std::uint8_t> body_;  // the delivery being handled

  std::uint64_t bursts_ = 0;
  std::uint64_t messages_ = 0;
};

}  // namespace dsekp::edge::amqp
