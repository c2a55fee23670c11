// The three metric kinds the edge exports: Counter, Gauge, Histogram.
//
// Concurrency: one thread (the MQTT callback thread) updates, HTTP threads read at any time.
// Every value is a std::atomic updated with relaxed read-modify-write operations: a scrape needs
// no ordering with the frame processing, only untorn values, and RMW (rather than load + store)
// keeps the types correct should the edge ever update from more than one thread. An update is a
// single uncontended atomic add, a few ns against the µs a frame costs.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "edge/metrics/metric_snapshot.hpp"

namespace dsekp::edge::metrics {

/// Monotonic event count.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  void inc() noexcept { value_.fetch_add(1, std::memory_order_relaxed); }
  void add(std::uint64_t n) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t value() const noexcept {
    return value_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint64_t> value_{0};
};

/// A value that goes up and down (active sessions, build info).
class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void set(double v) noexcept { value_.store(v, std::memory_order_relaxed); }
  void add(double d) noexcept { value_.fetch_add(d, std::memory_order_relaxed); }
  void inc() noexcept { add(1.0); }
  void dec() noexcept { add(-1.0); }
  [[nodiscard]] double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

/// Observations counted into fixed buckets (Prometheus "le" semantics: a value equal to a bound
/// falls into that bound's bucket).
///
/// Buckets are stored non-cumulatively, one atomic each (+Inf last), so observe() is one bucket
/// increment plus the sum. The total count is not stored separately but added up from the buckets
/// at snapshot time: then the +Inf bucket and _count are the same number by construction, which
/// Prometheus requires, even when a scrape lands between the two updates of an observation. Only
/// _sum may lag or lead the buckets by that one in-flight observation.
class Histogram {
 public:
  /// `upper_bounds` must be non-empty, finite and strictly increasing; throws
  /// std::invalid_argument otherwise.
  explicit Histogram(std::vector<double> upper_bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  /// NaN is ignored: it would turn _sum into NaN for the rest of the process's life.
  void observe(double value) noexcept;

  [[nodiscard]] HistogramSnapshot snapshot() const;
  [[nodiscard]] const std::vector<double>& upper_bounds() const noexcept { return bounds_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<std::uint64_t>> counts_;  // bounds_.size() + 1: the last is +Inf
  std::atomic<double> sum_{0.0};
};

}  // namespace dsekp::edge::metrics
