// The edge gateway's metric set (issue 3, observability) and the handles the message handler
// updates on its hot path: an array index and one atomic add per event, no string lookups.
//
//   dsekp_handshakes_total{outcome}            INIT frames: accepted | retransmitted | rejected
//   dsekp_frames_total{mode,outcome}           DATA frames: mode dsekp | psk, accepted | rejected
//   dsekp_rejections_total{reason}             every rejected message (INIT or DATA) by reason:
//                                              dsekp::error_name() of each Error except ok, plus
//                                              the edge's own reasons (kEdgeReasons)
//   dsekp_sessions_confirmed_total             sessions whose first DATA frame confirmed the key
//   dsekp_sessions_evicted_total               sessions dropped from the working set
//   dsekp_rekey_requests_total                 REKEY requests sent (DATA under a session the
//                                              edge does not hold: it lost it, or never had it)
//   dsekp_bursts_total                         bursts of received messages committed together
//   dsekp_burst_messages_total                 the messages in them (their ratio: the mean
//                                              burst, what --batch-max and --batch-wait-ms tune)
//   dsekp_active_sessions                      gauge
//   dsekp_frame_processing_seconds             histogram: one MQTT message, receipt to commit
//   dsekp_build_info{version}                  gauge, always 1
//
// No label ever names a device: the label values are fixed here, so the number of series is the
// same for ten devices or a million (per-device detail belongs in the logs, not in Prometheus).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dsekp/error.hpp"
#include "dsekp/mode.hpp"
#include "edge/metrics/metrics_registry.hpp"
#include "edge/service/edge_reason.hpp"

namespace dsekp::edge::metrics {

/// Every metric of the edge starts with this prefix.
inline constexpr std::string_view kMetricPrefix = "dsekp_";

enum class HandshakeOutcome : std::uint8_t {
  accepted,       // a new session's ACK was sent
  retransmitted,  // a repeated INIT was answered with the stored ACK again
  rejected,       // the INIT was refused (the reason goes to dsekp_rejections_total)
};
inline constexpr std::size_t kHandshakeOutcomeCount = 3;

enum class FrameOutcome : std::uint8_t { accepted, rejected };
inline constexpr std::size_t kFrameOutcomeCount = 2;

/// All reason label values of dsekp_rejections_total, in output order: the Error names in enum
/// order (without ok), then the edge's own reasons (edge::EdgeReason, is_rejection_label()).
[[nodiscard]] std::vector<std::string> rejection_reasons();

/// Upper bounds of dsekp_frame_processing_seconds: 5 µs to 100 ms. A DATA frame costs a few µs,
/// a handshake about 12 µs, an SQLite commit 20 µs to 200 µs (PERFORMANCE.md); the top buckets
/// catch stalls (a slow disk, a blocked broker connection).
[[nodiscard]] std::vector<double> processing_time_buckets();

/// Handles to the edge's series. Cheap to copy; valid while the Registry lives. Counting methods
/// ignore values outside their enum, so a stray cast cannot index out of bounds.
struct EdgeMetrics {
  std::array<Counter*, kHandshakeOutcomeCount> handshakes{};
  std::array<std::array<Counter*, kFrameOutcomeCount>, kModeCount> frames{};  // [mode][out]
  std::array<Counter*, dsekp::kErrorCount> rejections_by_error{};      // [Error::ok] stays null
  std::array<Counter*, kEdgeReasonCount> rejections_by_edge_reason{};  // [ok], [protocol_error]
                                                                       // stay null
  Counter* sessions_confirmed = nullptr;
  Counter* sessions_evicted = nullptr;
  Counter* rekey_requests = nullptr;
  Counter* ratchet_steps = nullptr;
  Counter* bursts = nullptr;
  Counter* burst_messages = nullptr;
  Gauge* active_sessions = nullptr;
  Histogram* frame_processing_seconds = nullptr;
  Family<Counter>* rejections = nullptr;  // the whole family, for rejection_counter()

  /// The dsekp_rejections_total series of a reason label ("replay", "store_failure"), or null
  /// if the reason is not declared.
  [[nodiscard]] Counter* rejection_counter(std::string_view reason) const noexcept {
    return rejections == nullptr ? nullptr : rejections->find({reason});
  }

  void handshake(HandshakeOutcome outcome) noexcept {
    inc(handshakes, static_cast<std::size_t>(outcome));
  }
  void frame(Mode mode, FrameOutcome outcome) noexcept {
    const auto m = static_cast<std::size_t>(mode);
    if (m < frames.size()) inc(frames[m], static_cast<std::size_t>(outcome));
  }
  /// Error::ok is not a rejection and is not counted.
  void rejection(dsekp::Error error) noexcept {
    inc(rejections_by_error, static_cast<std::size_t>(error));
  }
  /// EdgeReason::ok and protocol_error (the Error is the label) are not counted.
  void rejection(EdgeReason reason) noexcept {
    inc(rejections_by_edge_reason, static_cast<std::size_t>(reason));
  }
  void session_confirmed() noexcept { sessions_confirmed->inc(); }
  void session_evicted() noexcept { sessions_evicted->inc(); }
  void rekey_requested() noexcept { rekey_requests->inc(); }
  void ratchet_stepped(std::uint32_t steps) noexcept { ratchet_steps->add(steps); }
  void burst_committed(std::size_t messages) noexcept {
    bursts->inc();
    burst_messages->add(messages);
  }
  void set_active_sessions(std::size_t n) noexcept { active_sessions->set(static_cast<double>(n)); }
  void frame_processed(std::chrono::steady_clock::duration elapsed) noexcept {
    frame_processing_seconds->observe(std::chrono::duration<double>(elapsed).count());
  }

 private:
  template <std::size_t N>
  static void inc(const std::array<Counter*, N>& counters, std::size_t i) noexcept {
    if (i < N && counters[i] != nullptr) counters[i]->inc();
  }
};

/// Registers the edge's metric set in `registry` (once per registry: a second call throws, the
/// names being taken), sets dsekp_build_info to 1 and returns the handles.
[[nodiscard]] EdgeMetrics declare_edge_metrics(Registry& registry);

/// The version reported by dsekp_build_info (the CMake project version).
[[nodiscard]] std::string_view build_version() noexcept;

}  // namespace dsekp::edge::metrics
