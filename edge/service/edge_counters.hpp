// The edge's running totals, for the metrics endpoint (a later part exports them to Prometheus:
// each array becomes one counter family with the enum's stable name as the label value).
//
// Plain integers, not atomics: EdgeService updates them under its lock, once per handled
// message, and readers take a copy with EdgeService::snapshot(), which holds the same lock. Do
// not read a live EdgeCounters from another thread.
#pragma once

#include <array>
#include <cstdint>

#include "codec_simdjson/simd_codec.hpp"
#include "dsekp/error.hpp"
#include "dsekp/mode.hpp"
#include "edge_reason.hpp"
#include "handle_result.hpp"

namespace dsekp::edge {

struct EdgeCounters {
  /// Every message and downlink request, by kind (`unknown` = unknown topic).
  std::array<std::uint64_t, kMessageKindCount> messages{};
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
  std::array<std::uint64_t, kEdgeReasonCount> edge_rejections{};
  /// How the JSON hot frames were decoded (copied from the decoder by snapshot()).
  SimdJsonDecoder::Stats json_decoder;

  /// Adds one handled message.
  void record(const HandleResult& result) noexcept;
};

}  // namespace dsekp::edge
