// Counting one handled message (see edge_counters.hpp).
#include "edge_counters.hpp"

namespace dsekp::edge {

void EdgeCounters::record(const HandleResult& result) noexcept {
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

}  // namespace dsekp::edge
