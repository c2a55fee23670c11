// Histogram bucket validation, observation and snapshot (Counter and Gauge are inline).
#include "edge/metrics/metric_types.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace dsekp::edge::metrics {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1) {
  if (bounds_.empty()) throw std::invalid_argument("histogram: no bucket bounds");
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    // +Inf is always added by the exposition; an explicit one would be a duplicate bucket.
    if (!std::isfinite(bounds_[i])) {
      throw std::invalid_argument("histogram: bucket bounds must be finite");
    }
    if (i > 0 && !(bounds_[i - 1] < bounds_[i])) {
      throw std::invalid_argument("histogram: bucket bounds must be strictly increasing");
    }
  }
}

void Histogram::observe(double value) noexcept {
  if (std::isnan(value)) return;
  // First bound >= value; past the last bound is the +Inf bucket.
  const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  counts_[static_cast<std::size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

HistogramSnapshot Histogram::snapshot() const {
  HistogramSnapshot s;
  s.upper_bounds = bounds_;
  s.cumulative.reserve(bounds_.size());
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.count = running + counts_.back().load(std::memory_order_relaxed);
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace dsekp::edge::metrics
