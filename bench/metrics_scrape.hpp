// One value from an edge's Prometheus endpoint (`dsekp edge --metrics HOST:PORT`): a plain
// HTTP/1.0 GET /metrics on loopback, bounded in time. Used by `dsekp bench edge` (the edge's
// processing-time totals) and `dsekp bench scale --store redis` (each edge's
// dsekp_store_round_trips_total before and after the fleet: the round trips the edge made to
// Redis, which Redis's own counters cannot show).
#pragma once

#include <optional>
#include <string>

namespace dsekp::bench {

/// The body of GET /metrics from 127.0.0.1:port, or nothing if the edge does not answer (about
/// 2 s at most).
std::optional<std::string> scrape_metrics(int port);

/// The value of the unlabelled sample `name` in Prometheus text, or nothing if absent.
std::optional<double> metric_value(const std::string& text, const std::string& name);

}  // namespace dsekp::bench
