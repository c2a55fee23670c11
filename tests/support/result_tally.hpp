// A tally of handled messages for the tests of EdgeService: the results a test received, counted
// by kind, outcome and reason (the daemon counts the same results into its Prometheus metrics,
// edge/daemon/result_metrics.hpp).
#pragma once

#include <array>
#include <cstdint>

#include "dsekp/error.hpp"
#include "dsekp/mode.hpp"
#include "edge/service/edge_reason.hpp"
#include "edge/service/handle_result.hpp"

namespace dsekp::test {

struct ResultTally {
  using EdgeReason = edge::EdgeReason;
  using HandleResult = edge::HandleResult;
  using MessageKind = edge::MessageKind;

  /// Every message and downlink request, by kind (`unknown` = unknown topic).
  std::array<std::uint64_t, edge::kMessageKindCount> messages{};
  /// Accepted INITs that opened a new pending session (an ACK was published).
  std::uint64_t handshakes = 0;
  /// Retransmitted INITs answered with the stored ACK.
  std::uint64_t ack_retransmissions = 0;
  /// Accepted uplink frames, by Mode (psk, dsekp).
  std::array<std::uint64_t, kModeCount> frames_accepted{};
  /// Downlink frames sealed and handed back for publishing.
  std::uint64_t downlinks = 0;
  /// Pending sessions confirmed by their first DATA frame, and older sessions that made way.
  std::uint64_t sessions_confirmed = 0;
  std::uint64_t sessions_evicted = 0;
  /// Stored states dropped because the device's credentials changed (rotate, remove + re-add).
  std::uint64_t stale_states_dropped = 0;
  /// REKEY requests published (a DATA frame under a session the edge does not hold).
  std::uint64_t rekey_requests = 0;
  /// Protocol rejections, indexed by dsekp::Error (error_name() is the label).
  std::array<std::uint64_t, kErrorCount> protocol_rejections{};
  /// Edge-level rejections and failures, indexed by EdgeReason (edge_reason_name() is the
  /// label). The `ok` and `protocol_error` entries stay 0: protocol rejections are counted
  /// above, by their reason.
  std::array<std::uint64_t, edge::kEdgeReasonCount> edge_rejections{};

  /// Adds one handled message.
  void record(const HandleResult& result) noexcept {
    ++messages[static_cast<std::size_t>(result.kind)];
    // A stale state can be dropped by a message that is then rejected (DATA under the old keys).
    if (result.stale_state_dropped) ++stale_states_dropped;
    if (result.rekey_requested) ++rekey_requests;  // on a rejection (unknown_session)
    if (result.reason == EdgeReason::protocol_error) {
      ++protocol_rejections[static_cast<std::size_t>(result.error)];
      return;
    }
    if (result.reason != EdgeReason::ok) {
      ++edge_rejections[static_cast<std::size_t>(result.reason)];
      return;
    }
    if (result.handshake_accepted) ++handshakes;
    if (result.ack_retransmitted) ++ack_retransmissions;
    if (result.frame) ++frames_accepted[static_cast<std::size_t>(result.frame->mode)];
    if (result.kind == MessageKind::downlink) ++downlinks;
    if (result.session_confirmed) ++sessions_confirmed;
    if (result.session_evicted) ++sessions_evicted;
  }
};

}  // namespace dsekp::test
