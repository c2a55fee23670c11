// Declaration of the edge's metric set (see edge_metrics.hpp).
#include "edge/metrics/edge_metrics.hpp"

#include <algorithm>
#include <utility>

#ifndef DSEKP_VERSION_STRING
#error "DSEKP_VERSION_STRING must be defined by the build (edge/metrics/CMakeLists.txt)"
#endif

namespace dsekp::edge::metrics {
namespace {

std::string metric(std::string_view suffix) {
  return std::string(kMetricPrefix) + std::string(suffix);
}

constexpr std::array<std::string_view, kHandshakeOutcomeCount> kHandshakeOutcomes = {
    "accepted", "retransmitted", "rejected"};
constexpr std::array<std::string_view, kFrameOutcomeCount> kFrameOutcomes = {"accepted",
                                                                             "rejected"};

}  // namespace

std::string_view build_version() noexcept {
  return DSEKP_VERSION_STRING;
}

std::vector<std::string> rejection_reasons() {
  std::vector<std::string> reasons;
  for (std::uint8_t e = 1; e < dsekp::kErrorCount; ++e) {
    reasons.emplace_back(dsekp::error_name(static_cast<dsekp::Error>(e)));
  }
  for (std::size_t r = 0; r < kEdgeReasonCount; ++r) {
    const auto reason = static_cast<EdgeReason>(r);
    if (is_rejection_label(reason)) reasons.emplace_back(edge_reason_name(reason));
  }
  return reasons;
}

std::vector<double> processing_time_buckets() {
  return {5e-6, 1e-5,   2.5e-5, 5e-5, 1e-4,   2.5e-4, 5e-4,
          1e-3, 2.5e-3, 5e-3,   1e-2, 2.5e-2, 5e-2,   1e-1};
}

EdgeMetrics declare_edge_metrics(Registry& registry) {
  EdgeMetrics m;

  FamilySpec handshakes{metric("handshakes_total"),
                        "INIT frames handled, by outcome (rejections by reason are in "
                        "dsekp_rejections_total).",
                        {"outcome"},
                        {}};
  for (auto o : kHandshakeOutcomes) handshakes.series.push_back({std::string(o)});
  auto& hs = registry.add_counter(std::move(handshakes));
  for (std::size_t i = 0; i < kHandshakeOutcomes.size(); ++i) {
    m.handshakes[i] = &hs.at({kHandshakeOutcomes[i]});
  }

  FamilySpec frames{
      metric("frames_total"),
      "DATA frames handled, by protocol mode (dsekp or the psk baseline) and outcome.",
      {"mode", "outcome"},
      {}};
  for (const Mode mode : kModes) {
    for (auto o : kFrameOutcomes)
      frames.series.push_back({std::string(mode_name(mode)), std::string(o)});
  }
  auto& fr = registry.add_counter(std::move(frames));
  for (std::size_t i = 0; i < kModes.size(); ++i) {
    for (std::size_t j = 0; j < kFrameOutcomes.size(); ++j) {
      m.frames[i][j] = &fr.at({mode_name(kModes[i]), kFrameOutcomes[j]});
    }
  }

  FamilySpec rejections{metric("rejections_total"),
                        "Rejected messages (INIT or DATA), by reason: the protocol core's error "
                        "names and the edge's own reasons.",
                        {"reason"},
                        {}};
  for (auto& r : rejection_reasons()) rejections.series.push_back({std::move(r)});
  auto& rej = registry.add_counter(std::move(rejections));
  m.rejections = &rej;
  for (std::uint8_t e = 1; e < dsekp::kErrorCount; ++e) {
    m.rejections_by_error[e] = &rej.at({dsekp::error_name(static_cast<dsekp::Error>(e))});
  }
  for (std::size_t r = 0; r < kEdgeReasonCount; ++r) {
    const auto reason = static_cast<EdgeReason>(r);
    if (is_rejection_label(reason))
      m.rejections_by_edge_reason[r] = &rej.at({edge_reason_name(reason)});
  }

  m.rekey_requests = &registry
                          .add_counter({metric("rekey_requests_total"),
                                        "REKEY requests sent to devices whose session the edge "
                                        "does not hold.",
                                        {},
                                        {}})
                          .get();
  m.bursts = &registry
                  .add_counter({metric("bursts_total"),
                                "Bursts of received messages handled in one store transaction "
                                "and acknowledged after its commit.",
                                {},
                                {}})
                  .get();
  m.burst_messages = &registry
                          .add_counter({metric("burst_messages_total"),
                                        "Messages in those bursts: burst_messages_total / "
                                        "bursts_total is the mean burst (--batch-max, "
                                        "--batch-wait-ms).",
                                        {},
                                        {}})
                          .get();
  m.ratchet_steps =
      &registry
           .add_counter({metric("ratchet_steps_total"),
                         "Steps of ratcheting devices' secrets (PROTOCOL.md 6.6): one "
                         "per confirmed session, more when an INIT showed the edge "
                         "behind.",
                         {},
                         {}})
           .get();
  m.sessions_confirmed =
      &registry
           .add_counter({metric("sessions_confirmed_total"),
                         "Sessions confirmed by their first authentic DATA frame.",
                         {},
                         {}})
           .get();
  m.sessions_evicted = &registry
                            .add_counter({metric("sessions_evicted_total"),
                                          "Sessions removed from the edge's in-memory working set.",
                                          {},
                                          {}})
                            .get();
  m.active_sessions =
      &registry
           .add_gauge({metric("active_sessions"), "Sessions currently held by the edge.", {}, {}})
           .get();
  m.frame_processing_seconds =
      &registry
           .add_histogram({metric("frame_processing_seconds"),
                           "Time to process one MQTT message, from receipt to the store commit, "
                           "in seconds.",
                           {},
                           {}},
                          processing_time_buckets())
           .get();

  auto& build = registry.add_gauge({metric("build_info"),
                                    "Build of the edge; the value is always 1.",
                                    {"version"},
                                    {{std::string(build_version())}}});
  build.at({build_version()}).set(1.0);
  return m;
}

}  // namespace dsekp::edge::metrics
