// record_result (see result_metrics.hpp).
#include "edge/daemon/result_metrics.hpp"

namespace dsekp::edge::daemon {
namespace {

void count_rejection(metrics::EdgeMetrics& m, const HandleResult& r) noexcept {
  if (r.reason == EdgeReason::protocol_error)
    m.rejection(r.error);
  else
    m.rejection(r.reason);
}

}  // namespace

void record_failed_attempt(metrics::EdgeMetrics& m, const HandleResult& r) noexcept {
  count_rejection(m, r);
}

void record_result(metrics::EdgeMetrics& m, const HandleResult& r,
                   std::chrono::steady_clock::duration elapsed) noexcept {
  m.frame_processed(elapsed);
  if (!r.ok()) count_rejection(m, r);
  switch (r.kind) {
    case MessageKind::init:
      if (!r.ok())
        m.handshake(metrics::HandshakeOutcome::rejected);
      else if (r.ack_retransmitted)
        m.handshake(metrics::HandshakeOutcome::retransmitted);
      else
        m.handshake(metrics::HandshakeOutcome::accepted);
      break;
    case MessageKind::data:
    case MessageKind::psk: {
      const auto mode = r.kind == MessageKind::psk ? Mode::psk : Mode::dsekp;
      m.frame(mode, r.ok() ? metrics::FrameOutcome::accepted : metrics::FrameOutcome::rejected);
      break;
    }
    default:
      break;
  }
  if (r.session_confirmed) m.session_confirmed();
  if (r.session_evicted) m.session_evicted();
  if (r.rekey_requested) m.rekey_requested();
  if (const std::uint32_t steps = r.ratchet_steps + (r.ratcheted ? 1u : 0u); r.ok() && steps > 0)
    m.ratchet_stepped(steps);
}

}  // namespace dsekp::edge::daemon
