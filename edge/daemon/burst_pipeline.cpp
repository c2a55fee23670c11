// BurstPipeline (see burst_pipeline.hpp).
#include "edge/daemon/burst_pipeline.hpp"

#include <algorithm>

#include "edge/daemon/result_metrics.hpp"
#include "edge/daemon/test_hold.hpp"
#include "edge/daemon/unix_clock.hpp"
#include "edge/logging/edge_logger.hpp"

namespace dsekp::edge::daemon {

BurstPipeline::BurstPipeline(BurstPipelineParts parts)
    : parts_(parts),
      batch_(
          parts.service,
          [&transport = parts.transport](const Publish& p) {
            transport.publish(p.topic, p.payload, p.qos);
          },
          MessageBatchOptions{
              .settled = [this](const SettledMessage& m) { settle(m); },
              .failed_attempt = [this](const SettledMessage& m) { failed_attempt(m); },
          }),
      active_sessions_(static_cast<std::int64_t>(parts.active_sessions)) {
  parts_.metrics.set_active_sessions(static_cast<std::size_t>(active_sessions_));
  // An authenticated admin request seals a downlink in a transaction of its own: the open batch
  // is committed first.
  parts_.admin.set_before_seal([this] { batch_.end(); });
}

transport::TransportHandlers BurstPipeline::handlers(transport::ReadyHandler ready) {
  return {
      .message =
          [this](std::string_view topic, ByteView payload,
                 const transport::MessageProperties& properties) {
            return receive(topic, payload, properties);
          },
      .ready = std::move(ready),
      .burst_end = [this] { end_burst(); },
  };
}

transport::BurstWait BurstPipeline::receive(std::string_view topic, ByteView payload,
                                            const transport::MessageProperties& properties) {
  // On delivery, before decoding (LOGS.md); one reading gives both recvts_us and recvts_ms.
  const std::uint64_t recvts_us = unix_us_now();
  const std::uint64_t now_ms = recvts_us / 1000;
  if (topic == parts_.admin.topic()) {
    if (properties.retained) {
      // A stored request would send its downlink again on every restart of the edge.
      logging::logger().warn("admin request refused: retained_message (a stored copy)");
      return transport::BurstWait::may_wait;
    }
    const std::string answer = parts_.admin.handle(
        payload, {properties.response_topic, properties.correlation_data}, now_ms);
    logging::logger().info("admin downlink: {}", answer);
    parts_.store_watch.after_store_use();
    return transport::BurstWait::answer_pending;
  }
  test_hold(parts_.test_hold_ms, "before");
  batch_.handle(topic, payload, now_ms, recvts_us, properties.retained);
  parts_.store_watch.after_store_use();
  return batch_.has_answers() ? transport::BurstWait::answer_pending
                              : transport::BurstWait::may_wait;
}

void BurstPipeline::end_burst() {
  // Counted first, so that the count is never behind the burst's CSV lines and ACKs (a commit
  // that fails stops the process or is retried message by message: still this burst).
  if (const std::size_t messages = batch_.size(); messages > 0)
    parts_.metrics.burst_committed(messages);
  batch_.end();  // 1. commit, then the ACKs
  parts_.store_watch.after_store_use();
  deliver_held_downlinks();                         // 2.
  parts_.secret_eraser.erase_noted(unix_ms_now());  // 3.
  parts_.storage.prune_telemetry(unix_ms_now());    // 4.
  test_hold(parts_.test_hold_ms, "after");
}

void BurstPipeline::deliver_held_downlinks() {
  if (deliver_to_.empty()) return;
  const std::uint64_t now_ms = unix_ms_now();
  for (const std::string& dev_id : deliver_to_) parts_.admin.deliver(dev_id, now_ms);
  deliver_to_.clear();
  parts_.store_watch.after_store_use();
}

void BurstPipeline::settle(const SettledMessage& m) {
  const HandleResult& r = m.result;
  record_result(parts_.metrics, r, m.handling);
  parts_.store_watch.count_lookup(r.cache_lookup);
  if (r.ok() && r.frame) {
    parts_.activity.seen(r.dev_id, m.now_ms);
    if (r.frame->mode == Mode::dsekp && parts_.admin.holds(r.dev_id)) deliver_to_.insert(r.dev_id);
  }
  parts_.secret_eraser.note(r);
  if (r.processed() && r.established_delta != 0) {
    active_sessions_ = std::max<std::int64_t>(0, active_sessions_ + r.established_delta);
    parts_.metrics.set_active_sessions(static_cast<std::size_t>(active_sessions_));
  }
  if (!r.ok()) parts_.rejections.log(r, m.topic, m.now_ms);
  // Ratchet mode: an INIT more than one secret ahead means the state went back in time (a store
  // restored from an older copy); the device got back in, the operator should know. At most one
  // per accepted INIT, which the device's INIT budget bounds.
  if (r.ok() && r.ratchet_steps > 1)
    logging::logger().warn(
        "device {}: its INIT was {} ratchet steps ahead of the stored state "
        "(a state restored from an older copy?); caught up",
        r.dev_id, r.ratchet_steps);
}

void BurstPipeline::failed_attempt(const SettledMessage& m) {
  record_failed_attempt(parts_.metrics, m.result);
  parts_.rejections.log(m.result, m.topic, m.now_ms);
}

}  // namespace dsekp::edge::daemon
