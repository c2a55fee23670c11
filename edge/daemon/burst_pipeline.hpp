// The path of every received message through the daemon, in the order it happens, for one burst
// of messages (the transport delivers them one by one and then ends the burst):
//
//   receive()     a message: the admin topic's requests are answered at once (admin_handler);
//                 every other message is handled in memory, in the open batch (MessageBatch:
//                 refused unread if oversized or retained; else decoded, authenticated and its
//                 state change, rows and ACKs kept in the batch's transaction, nothing written).
//                 Tells the transport whether the burst may wait for more messages: not once
//                 it holds an answer to publish (an ACK, a REKEY request).
//   end_burst()   the burst's last message is in:
//                   1. commit: the batch's one store transaction, the sinks' rows with it, then
//                      the ACKs it produced are published (MessageBatch::end);
//                   2. held downlinks go to the devices whose frames were just accepted;
//                   3. provisioned secrets superseded by a committed ratchet step are erased
//                      (secret_eraser), once the store is durable;
//                   4. old telemetry rows are pruned (retention).
//                 When it returns, the transport writes the burst's acknowledgements (PUBACKs):
//                 nothing is acknowledged that was not stored (edge/transport/transport.hpp).
//   settle()      each message's final outcome, as the batch decides it (at the commit, or
//                 after a retry): metrics, device activity, the rejection log, what steps 2 and 3
//                 of end_burst() act on, the active-sessions gauge.
//
// A message that cannot be stored fail-stops the process inside end_burst() (MessageBatch):
// nothing of the burst is acknowledged and the broker delivers it again after the restart.
// Loop thread only.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "edge/daemon/admin_handler.hpp"
#include "edge/daemon/device_activity.hpp"
#include "edge/daemon/edge_storage.hpp"
#include "edge/daemon/rejection_log.hpp"
#include "edge/daemon/secret_eraser.hpp"
#include "edge/daemon/store_watch.hpp"
#include "edge/metrics/edge_metrics.hpp"
#include "edge/service/message_batch.hpp"
#include "edge/transport/transport.hpp"

namespace dsekp::edge::daemon {

/// What the pipeline works with; each must outlive it.
struct BurstPipelineParts {
  EdgeService& service;
  transport::Transport& transport;  // the batch's ACKs are published through it
  AdminHandler& admin;
  EdgeStorage& storage;
  StoreWatch& store_watch;
  metrics::EdgeMetrics& metrics;
  DeviceActivity& activity;
  SecretEraser& secret_eraser;
  RejectionLog& rejections;
  std::uint32_t test_hold_ms = 0;     // test_hold.hpp; 0 in production
  std::uint64_t active_sessions = 0;  // the store's count at start-up
};

class BurstPipeline {
 public:
  explicit BurstPipeline(BurstPipelineParts parts);
  BurstPipeline(const BurstPipeline&) = delete;
  BurstPipeline& operator=(const BurstPipeline&) = delete;

  /// The handlers to start the transport with (`ready` is the caller's).
  [[nodiscard]] transport::TransportHandlers handlers(transport::ReadyHandler ready);

  transport::BurstWait receive(std::string_view topic, ByteView payload,
                               const transport::MessageProperties& properties);
  void end_burst();

 private:
  void settle(const SettledMessage& m);
  void failed_attempt(const SettledMessage& m);
  void deliver_held_downlinks();

  BurstPipelineParts parts_;
  MessageBatch batch_;
  // Devices with downlinks held whose frame was accepted in this burst (end_burst step 2).
  std::set<std::string> deliver_to_;
  // dsekp_active_sessions: counted in the store once, then followed message by message. With a
  // shared store the gauge is per edge: the sessions this edge's own messages created minus
  // those they removed since it started.
  std::int64_t active_sessions_ = 0;
};

}  // namespace dsekp::edge::daemon
