// Feeds the edge's Prometheus metrics (edge/metrics/edge_metrics.hpp) from one HandleResult:
// handshakes by outcome, DATA/PSK frames by mode and outcome, rejections by reason, session
// confirmations and evictions, and the processing time. dsekp_active_sessions is not fed yet
// (the service does not report its working set; left for later).
#pragma once

#include <chrono>

#include "edge/metrics/edge_metrics.hpp"
#include "edge/service/handle_result.hpp"

namespace dsekp::edge::daemon {

void record_result(metrics::EdgeMetrics& m, const HandleResult& r,
                   std::chrono::steady_clock::duration elapsed) noexcept;

}  // namespace dsekp::edge::daemon
