// MessageBatch: how the daemon drives EdgeService for a burst of received messages so that one
// store transaction holds many of them and nothing is acknowledged that was not stored
// (ARCHITECTURE.md "The edge's durability"; the MQTT side is edge/mqtt/mqtt_client.hpp).
//
// The MQTT loop thread calls handle() for each message of a burst and end() once the burst is
// over, before libmosquitto writes the PUBACKs it queued for them:
//   handle()  first refuses, without copying or decoding it, a message that cannot be a frame:
//             one over kMaxFrameSize bytes (frame_too_large) or a retained copy the broker
//             stored (retained_message: a frame replayed to every edge that subscribes). Such
//             a message settles at once, changes nothing and is acknowledged with the burst.
//             Otherwise it opens the batch on the first message (EdgeService::begin_batch), handles
//             the message in its own savepoint and keeps its publishes (ACKs) for later. Its
//             outcome is known only when the batch ends: if the batch's commit fails, the message
//             is handled again (below), and with a store shared by several edges the second
//             handling may decide otherwise (a frame the first handling accepted from a stale
//             cache is a replay). So handle() returns nothing; the `settled` callback gets each
//             message's final result once: at end() for the batch's messages, at once for a
//             message refused unread or retried alone.
//   end()     commits the batch, then publishes the kept messages in order. Nothing of a
//             batch is published before its commit (PROTOCOL.md 6.5).
// Transient failures (store/sink/registry/internal; HandleResult::processed() false):
//   * a message: its savepoint was undone; the batch so far is committed (end()), and the
//     message is retried alone, each try its own transaction, `attempts` times in all with
//     `pause` between;
//   * a batch commit: nothing of the batch was stored; its messages (kept as copies) are
//     handled again: after a generation_conflict (another edge on the shared store was first
//     for one device) once more as one batch, otherwise, or if that conflicts too, one by one,
//     each with the same bounded retry.
// If that does not help, the message cannot be stored, and since libmosquitto has queued its
// PUBACK already (the PUBACK is queued before on_message runs; only our loop writes it) the
// one way not to acknowledge it is to never write again: `fail_stop` is called, which by
// default logs and ends the process at once with _exit(kExitUnprocessed), without running
// destructors or writing a byte to the broker. The broker redelivers every unacknowledged
// message to the restarted edge (systemd: Restart=on-failure).
//
// Threads: the MQTT loop thread only (EdgeService's lock makes the service calls safe anyway).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edge_service.hpp"

namespace dsekp::edge {

/// The exit status of a fail-stop: sysexits.h EX_TEMPFAIL ("try again later").
inline constexpr int kExitUnprocessed = 75;

/// Logs `why` on stderr (write(2): no buffer to lose) and _exit(kExitUnprocessed)s.
[[noreturn]] void fail_stop_process(const std::string& why) noexcept;

/// A message's final outcome (MessageBatchOptions::settled).
struct SettledMessage {
  std::string_view topic;
  const HandleResult& result;
  std::uint64_t now_ms = 0;                        // when it was received
  std::chrono::steady_clock::duration handling{};  // of the handling that decided it
};

struct MessageBatchOptions {
  int attempts = 3;  // tries of a failing message in all (1: no retry)
  std::chrono::milliseconds pause{50};
  /// Called when a message cannot be stored. Must not return normally (the default ends the
  /// process); a test may throw.
  std::function<void(const std::string& why)> fail_stop = fail_stop_process;
  /// Called once per message with its final outcome (see above); may be empty.
  std::function<void(const SettledMessage&)> settled;
  /// Called for each handling that failed transiently and will be tried again or fail-stop
  /// (HandleResult::processed() false); may be empty.
  std::function<void(const SettledMessage&)> failed_attempt;
};

class MessageBatch {
 public:
  using Publisher = std::function<void(const Publish&)>;

  /// `service` must outlive this object; `publish` queues one MQTT publish.
  MessageBatch(EdgeService& service, Publisher publish, MessageBatchOptions options = {});
  MessageBatch(const MessageBatch&) = delete;
  MessageBatch& operator=(const MessageBatch&) = delete;
  ~MessageBatch();

  /// Handles one message in the open batch (opening it if needed); see above. Its outcome is
  /// final only once the batch is: it reaches the `settled` callback then. `retained`: the
  /// broker delivered it as a stored retained message (MQTT retain flag on delivery).
  void handle(std::string_view topic, ByteView payload, std::uint64_t now_ms,
              std::uint64_t recvts_us, bool retained = false);
  /// Commits the open batch and publishes what it produced. No-op without one.
  void end();
  /// Messages in the open batch.
  [[nodiscard]] std::size_t size() const noexcept { return held_count_; }
  /// Whether a device waits for the end of this burst: the open batch holds publishes (ACKs,
  /// REKEY requests) that end() will send, or a message retried alone since the last end()
  /// published its own (false again once end() returns).
  [[nodiscard]] bool has_answers() const noexcept { return !pending_.empty() || answered_alone_; }

 private:
  struct Held {
    std::string topic;
    std::vector<std::uint8_t> payload;
    std::uint64_t now_ms = 0;
    std::uint64_t recvts_us = 0;
    HandleResult result;  // of the handling in the batch
    std::chrono::steady_clock::duration handling{};
  };
  void open();
  /// The verdict on a message refused before it is copied (oversized or retained), if any.
  [[nodiscard]] std::optional<HandleResult> refuse_unread(std::string_view topic, ByteView payload,
                                                          bool retained) const;
  /// Retries one message alone until it is processed (then publishes its publishes) or the
  /// attempts are used up (then fail_stop).
  HandleResult handle_alone(std::string_view topic, ByteView payload, std::uint64_t now_ms,
                            std::uint64_t recvts_us, int attempts, bool pause_first);
  void publish_all(const std::vector<Publish>& publishes);
  void settle(std::string_view topic, const HandleResult& r, std::uint64_t now_ms,
              std::chrono::steady_clock::duration handling);

  EdgeService& service_;
  Publisher publish_;
  MessageBatchOptions options_;
  std::vector<Held> held_;  // copies of the batch's messages (reused buffers)
  std::size_t held_count_ = 0;
  std::vector<Publish> pending_;  // the batch's publishes, in order
  bool answered_alone_ = false;   // handle_alone published since the last end() (has_answers)
  bool rebatching_ = false;       // handling a conflicted batch's messages again as a batch
};

}  // namespace dsekp::edge
