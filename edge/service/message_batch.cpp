// MessageBatch (see message_batch.hpp).
#include "message_batch.hpp"

#include <unistd.h>

#include <cstdio>
#include <thread>
#include <utility>

#include "dsekp/spec.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/logging/printable.hpp"

namespace dsekp::edge {
namespace {

// Sets a flag back to false when the scope it guards is left, whichever way.
class ClearedOnExit {
 public:
  explicit ClearedOnExit(bool& flag) noexcept : flag_(flag) {}
  ClearedOnExit(const ClearedOnExit&) = delete;
  ClearedOnExit& operator=(const ClearedOnExit&) = delete;
  ~ClearedOnExit() { flag_ = false; }

 private:
  bool& flag_;
};

std::string describe(const HandleResult& r) {
  std::string text = r.reason_name();
  if (!r.detail.empty()) text += " (" + r.detail + ")";
  return text;
}

}  // namespace

void fail_stop_process(const std::string& why) noexcept {
  const std::string line = "dsekp edge: FAIL-STOP: " + why +
                           "; exiting without acknowledging (status " +
                           std::to_string(kExitUnprocessed) + ", the broker redelivers)\n";
  // write(2), not stdio or a logger: nothing may stay in a buffer that _exit drops.
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  // _exit: no destructor may run (the MQTT client's would write the queued PUBACKs on its way
  // out).
  ::_exit(kExitUnprocessed);
}

MessageBatch::MessageBatch(EdgeService& service, Publisher publish, MessageBatchOptions options)
    : service_(service), publish_(std::move(publish)), options_(std::move(options)) {
  if (options_.attempts < 1) options_.attempts = 1;
  if (!options_.fail_stop) options_.fail_stop = fail_stop_process;
}

MessageBatch::~MessageBatch() {
  // A batch still open here was never ended: nothing of it may count as stored.
  service_.rollback_batch();
}

void MessageBatch::open() {
  StoreResult r = service_.begin_batch();
  for (int attempt = 1; !r.ok() && attempt < options_.attempts; ++attempt) {
    std::this_thread::sleep_for(options_.pause);
    r = service_.begin_batch();
  }
  if (!r.ok()) options_.fail_stop(std::string("cannot begin a store transaction: ") + describe(r));
}

std::optional<HandleResult> MessageBatch::refuse_unread(std::string_view topic, ByteView payload,
                                                        bool retained) const {
  if (payload.size() <= kMaxFrameSize && !retained) return std::nullopt;
  HandleResult r;
  r.kind = service_.topics().classify(topic);
  if (payload.size() > kMaxFrameSize) {
    r.reason = EdgeReason::protocol_error;
    r.error = Error::frame_too_large;
    r.detail = std::to_string(payload.size()) + " bytes, at most " + std::to_string(kMaxFrameSize) +
               " (not read)";
  } else {
    r.reason = EdgeReason::retained_message;
    r.detail = "a retained copy stored by the broker, not a frame a device sent now";
  }
  return r;
}

void MessageBatch::handle(std::string_view topic, ByteView payload, std::uint64_t now_ms,
                          std::uint64_t recvts_us, bool retained) {
  if (std::optional<HandleResult> refused = refuse_unread(topic, payload, retained)) {
    settle(topic, *refused, now_ms, {});
    return;
  }
  if (!service_.batch_open()) open();
  // A copy, in case the batch's commit fails and its messages must be handled again.
  if (held_count_ == held_.size()) held_.emplace_back();
  Held& held = held_[held_count_++];
  held.topic.assign(topic);
  held.payload.assign(payload.begin(), payload.end());
  held.now_ms = now_ms;
  held.recvts_us = recvts_us;

  const auto started = std::chrono::steady_clock::now();
  HandleResult r = service_.handle(topic, payload, now_ms, recvts_us);
  held.handling = std::chrono::steady_clock::now() - started;
  if (r.processed()) {
    for (Publish& p : r.publishes) pending_.push_back(std::move(p));
    r.publishes.clear();  // the batch's now: published after its commit
    if (options_.settled) held.result = std::move(r);
    return;
  }
  // Its savepoint is undone (or SQLite lost the whole transaction): keep the batch so far,
  // then try the message alone.
  if (options_.failed_attempt)
    options_.failed_attempt(SettledMessage{topic, r, now_ms, held.handling});
  --held_count_;
  logging::logger().warn("message on {} failed: {}; retrying it alone", logging::printable(topic),
                         describe(r));
  end();
  (void)handle_alone(topic, payload, now_ms, recvts_us, options_.attempts - 1, true);
}

void MessageBatch::end() {
  // Whatever end() publishes itself (the commit's ACKs, or a failed commit's retries) has gone
  // out when it returns: the next burst owes none of it.
  const ClearedOnExit answered_alone_cleared{answered_alone_};
  if (!service_.batch_open()) return;
  const StoreResult r = service_.commit_batch();
  if (r.ok()) {
    publish_all(pending_);
    pending_.clear();
    // Emptied first: a callback that throws must not make the next end() settle these again.
    const std::size_t count = std::exchange(held_count_, 0);
    for (std::size_t i = 0; i < count; ++i) {
      Held& m = held_[i];
      HandleResult result = std::exchange(m.result, HandleResult{});  // its row holds plaintext
      settle(m.topic, result, m.now_ms, m.handling);
    }
    return;
  }
  // Nothing of the batch was stored (and nothing of it published): handle its messages again.
  pending_.clear();
  std::vector<Held> held;
  held.swap(held_);
  const std::size_t count = std::exchange(held_count_, 0);
  for (std::size_t i = 0; i < count; ++i) held[i].result = HandleResult{};  // undone outcomes
  if (r.status == StoreStatus::generation_conflict && !rebatching_) {
    // Another edge got there first for one device (a frame it accepted already, a state it
    // saved). The store has reloaded only that device's view (RedisSessionStore), so the batch
    // handled again as one batch refuses the stale message and commits the rest: one more
    // commit instead of one transaction per message. A second conflict goes one by one.
    logging::logger().warn(
        "the commit of {} messages conflicted with another writer; handling "
        "them again as one batch",
        count);
    rebatching_ = true;
    const ClearedOnExit rebatching_cleared{rebatching_};
    for (std::size_t i = 0; i < count; ++i) {
      const Held& m = held[i];
      (void)handle(m.topic, ByteView(m.payload.data(), m.payload.size()), m.now_ms, m.recvts_us);
    }
    end();
    return;
  }
  logging::logger().error("the commit of {} messages failed ({}); handling them one by one", count,
                          describe(r));
  for (std::size_t i = 0; i < count; ++i) {
    const Held& m = held[i];
    (void)handle_alone(m.topic, ByteView(m.payload.data(), m.payload.size()), m.now_ms, m.recvts_us,
                       options_.attempts, i == 0);
  }
  held.swap(held_);  // keep the buffers
}

HandleResult MessageBatch::handle_alone(std::string_view topic, ByteView payload,
                                        std::uint64_t now_ms, std::uint64_t recvts_us, int attempts,
                                        bool pause_first) {
  HandleResult r;
  r.reason = EdgeReason::internal_error;
  r.detail = "not tried";
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0 || pause_first) std::this_thread::sleep_for(options_.pause);
    const auto started = std::chrono::steady_clock::now();
    r = service_.handle(topic, payload, now_ms, recvts_us);  // no batch open: its own transaction
    if (r.processed()) {
      publish_all(r.publishes);
      if (!r.publishes.empty()) answered_alone_ = true;
      settle(topic, r, now_ms, std::chrono::steady_clock::now() - started);
      return r;
    }
    if (options_.failed_attempt)
      options_.failed_attempt(
          SettledMessage{topic, r, now_ms, std::chrono::steady_clock::now() - started});
  }
  options_.fail_stop("message on " + std::string(topic) + " NOT PROCESSED after " +
                     std::to_string(options_.attempts) + " attempts: " + describe(r));
  return r;  // only a test's fail_stop returns (by throwing, normally)
}

void MessageBatch::settle(std::string_view topic, const HandleResult& r, std::uint64_t now_ms,
                          std::chrono::steady_clock::duration handling) {
  if (options_.settled) options_.settled(SettledMessage{topic, r, now_ms, handling});
}

void MessageBatch::publish_all(const std::vector<Publish>& publishes) {
  for (const Publish& p : publishes) publish_(p);
}

}  // namespace dsekp::edge
