// Prometheus naming rules, checked when a metric is registered so that a bad name fails at
// start-up instead of producing an exposition that the scraper rejects (which loses every metric
// of the scrape, not just the bad one).
#pragma once

#include <string_view>

namespace dsekp::edge::metrics {

/// [a-zA-Z_][a-zA-Z0-9_]*. Prometheus also allows ':', but reserves it for recording rules
/// written by operators; an exporter must not use it, so it is refused here.
[[nodiscard]] bool is_valid_metric_name(std::string_view name) noexcept;

/// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved for Prometheus' internal labels).
[[nodiscard]] bool is_valid_label_name(std::string_view name) noexcept;

/// The suffix every counter name must end with (Prometheus naming convention; the scraper's
/// rate() users and OpenMetrics rely on it).
inline constexpr std::string_view kCounterSuffix = "_total";

}  // namespace dsekp::edge::metrics
