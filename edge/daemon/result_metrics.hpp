// Feeds the edge's Prometheus metrics (edge/metrics/edge_metrics.hpp) from one HandleResult:
// handshakes by outcome, DATA/PSK frames by mode and outcome, rejections by reason, session
// confirmations and evictions, and the processing time. dsekp_active_sessions is a running total
// the daemon keeps (HandleResult::established_delta, from a count of the store at start-up).
#pragma once

#include <chrono>

#include "edge/metrics/edge_metrics.hpp"
#include "edge/service/handle_result.hpp"

namespace dsekp::edge::daemon {

/// A message's final outcome (MessageBatchOptions::settled): counted once per message.
void record_result(metrics::EdgeMetrics& m, const HandleResult& r,
                   std::chrono::steady_clock::duration elapsed) noexcept;

/// A handling that failed transiently (store, sink, registry, internal) and is tried again:
/// only its reason is counted in dsekp_rejections_total; the message's outcome comes later.
void record_failed_attempt(metrics::EdgeMetrics& m, const HandleResult& r) noexcept;

}  // namespace dsekp::edge::daemon
