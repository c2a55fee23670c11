// The edge's connection to its message broker, as the daemon's pipeline sees it: messages come in
// one burst at a time on one thread, publishes go out from any thread. Three implementations:
// MQTT on libmosquitto (edge/mqtt/) or on a client of our own (edge/mqtt_builtin/; --mqtt-client),
// and a RabbitMQ queue over AMQP (edge/amqp/; --amqp). Another broker's consumer is another
// folder implementing this and a line in make_transport (edge/daemon/broker_options.hpp).
//
// The contract the edge's exactly-once rests on (ARCHITECTURE.md "The edge's durability"):
//   * `message` and `burst_end` run on the transport's one loop thread, messages in arrival
//     order; `burst_end` follows a burst's last message (and precedes the next burst's first).
//   * Nothing received is acknowledged to the broker before the `burst_end` after it has
//     returned: the daemon commits the burst there. A process that dies earlier leaves every
//     message of the burst unacknowledged, and the broker delivers them again.
//   * publish() may be called from any thread, the handlers included; what they publish goes out
//     after the burst's acknowledgements are queued, never before `burst_end` returns.
//   * A transport may hold a burst open for a while for more messages (fewer, larger commits);
//     never when a message handler answered `BurstWait::answer_pending`.
//   * A handler that throws ends the process without another byte to the broker.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "dsekp/bytes.hpp"

namespace dsekp::edge::transport {

/// What a received message carries besides its topic and payload.
struct MessageProperties {
  bool retained = false;            // as delivered: set only for a stored retained copy
  std::string_view response_topic;  // MQTT 5 Response Topic ("": none)
  ByteView correlation_data;        // MQTT 5 Correlation Data (empty: none)
};

/// What a message asks of the burst it is in.
enum class BurstWait : std::uint8_t {
  may_wait,        // nobody waits for the burst's end because of this message
  answer_pending,  // something published at the burst's end answers it (an ACK, a REKEY request,
                   // an admin answer): end the burst without waiting for more messages
};

/// Called on the loop thread for every received message (the views live for the call only).
using MessageHandler = std::function<BurstWait(std::string_view topic, ByteView payload,
                                               const MessageProperties& properties)>;
/// Called on the loop thread each time every subscription of a (re)connection was granted.
using ReadyHandler = std::function<void()>;
/// Called on the loop thread after the last message of a burst, before its acknowledgements.
using BurstEndHandler = std::function<void()>;

struct TransportHandlers {
  MessageHandler message;
  ReadyHandler ready;         // may be empty
  BurstEndHandler burst_end;  // may be empty
};

class Transport {
 public:
  virtual ~Transport() = default;

  /// Starts connecting in the background (the loop thread retries until the broker answers)
  /// and delivering to `handlers`. False with `error` for what cannot get better by retrying
  /// (bad options, no thread, started before).
  [[nodiscard]] virtual bool start(TransportHandlers handlers, std::string& error) = 0;
  /// Disconnects and joins the loop thread: no handler runs after it. Idempotent.
  virtual void stop() noexcept = 0;
  /// Queues a publish (QoS 1 by default), also while disconnected. False for a bad argument
  /// or no memory.
  virtual bool publish(const std::string& topic, ByteView payload, int qos = 1, bool retain = false,
                       ByteView correlation_data = {}) noexcept = 0;
  /// Whether the broker accepted the connection and no disconnect came since (for /healthz).
  [[nodiscard]] virtual bool connected() const noexcept = 0;
  /// How long the loop thread has been inside the handlers; zero outside them (the systemd
  /// watchdog watches it).
  [[nodiscard]] virtual std::chrono::milliseconds loop_stalled_for() const noexcept = 0;
};

}  // namespace dsekp::edge::transport
