// A tiny metrics registry: families of counters, gauges and histograms, each with its label
// names and every label-value combination declared up front, at registration.
//
// Why everything is declared up front: the issue forbids per-device labels, and a registry that
// cannot create a series after start-up cannot grow one per device by accident (and cannot grow
// without bound under an attack that sends frames for made-up devices). It also lets the caller
// keep a Metric& per series and update it on the hot path without any lookup or lock.
//
// Registration validates names against the Prometheus rules (metric_names.hpp), enforces the
// `_total` suffix on counters (and refuses it elsewhere), refuses duplicate series and any name
// that would collide with another family's samples (a histogram `x` owns x_bucket, x_sum and
// x_count). Violations are programming errors found at start-up: std::invalid_argument.
//
// Thread safety: registration and collect() take a mutex, so HTTP threads may scrape while the
// edge is still registering; updating a metric takes none (metric_types.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "edge/metrics/metric_snapshot.hpp"
#include "edge/metrics/metric_types.hpp"

namespace dsekp::edge::metrics {

struct FamilySpec {
  std::string name;
  std::string help;                              // required: the HELP line says what is counted
  std::vector<std::string> label_names;          // empty: the family is one unlabelled series
  std::vector<std::vector<std::string>> series;  // label values of every series, in output order
};

class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
  [[nodiscard]] virtual FamilySnapshot snapshot() const = 0;
};

namespace detail {
inline std::uint64_t sample_of(const Counter& c) {
  return c.value();
}
inline double sample_of(const Gauge& g) {
  return g.value();
}
inline HistogramSnapshot sample_of(const Histogram& h) {
  return h.snapshot();
}
}  // namespace detail

/// The series of one metric family. Its set of series never changes after construction, so the
/// references it hands out stay valid for the registry's lifetime.
template <class Metric>
class Family final : public FamilyBase {
 public:
  /// `spec` must be validated; `metric_args` are passed to every series' constructor.
  template <class... Args>
  Family(FamilySpec spec, MetricType type, const Args&... metric_args)
      : spec_(std::move(spec)), type_(type) {
    metrics_.reserve(spec_.series.size());
    for (std::size_t i = 0; i < spec_.series.size(); ++i) {
      metrics_.push_back(std::make_unique<Metric>(metric_args...));
    }
  }

  [[nodiscard]] const std::string& name() const noexcept { return spec_.name; }
  [[nodiscard]] std::size_t size() const noexcept { return metrics_.size(); }

  /// The series with these label values (in label-name order), or null if that combination was
  /// not declared. A linear lookup, meant for set-up, not for the hot path.
  Metric* find(std::initializer_list<std::string_view> label_values) noexcept {
    for (std::size_t i = 0; i < spec_.series.size(); ++i) {
      const auto& declared = spec_.series[i];
      if (declared.size() == label_values.size() &&
          std::equal(declared.begin(), declared.end(), label_values.begin())) {
        return metrics_[i].get();
      }
    }
    return nullptr;
  }

  /// As find(), but throws std::out_of_range for an undeclared combination.
  Metric& at(std::initializer_list<std::string_view> label_values) {
    Metric* m = find(label_values);
    if (m == nullptr) {
      throw std::out_of_range("metric " + spec_.name + ": no series with these label values");
    }
    return *m;
  }

  /// The only series of an unlabelled family.
  Metric& get() {
    if (!spec_.label_names.empty()) {
      throw std::out_of_range("metric " + spec_.name + " has labels: use at()");
    }
    return *metrics_.front();
  }

  [[nodiscard]] FamilySnapshot snapshot() const override {
    FamilySnapshot s{spec_.name, spec_.help, type_, spec_.label_names, {}};
    s.series.reserve(metrics_.size());
    for (std::size_t i = 0; i < metrics_.size(); ++i) {
      s.series.push_back(SeriesSnapshot{spec_.series[i], detail::sample_of(*metrics_[i])});
    }
    return s;
  }

 private:
  FamilySpec spec_;
  MetricType type_;
  std::vector<std::unique_ptr<Metric>> metrics_;  // parallel to spec_.series
};

/// A family whose values are read when it is scraped (the process's CPU time, whether the broker
/// connection is up): `read` returns one value per declared series, in declaration order. It
/// runs on the scraping thread under the registry's lock, so it must be quick and must not
/// touch the registry.
using ReadValues = std::function<std::vector<double>()>;

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Family<Counter>& add_counter(FamilySpec spec);
  Family<Gauge>& add_gauge(FamilySpec spec);
  /// `upper_bounds`: finite, strictly increasing; the +Inf bucket is always added.
  Family<Histogram>& add_histogram(FamilySpec spec, std::vector<double> upper_bounds);
  /// A counter or gauge family computed at every scrape (see ReadValues); a counter's values
  /// may be fractional (seconds).
  void add_computed(FamilySpec spec, MetricType type, ReadValues read);

  /// A copy of every family's current values, families sorted by name (a stable order whatever
  /// the registration order), series in declaration order.
  [[nodiscard]] std::vector<FamilySnapshot> collect() const;

 private:
  template <class Metric>
  Family<Metric>& insert(std::unique_ptr<Family<Metric>> family, MetricType type);
  void insert_family(const std::string& name, MetricType type, std::unique_ptr<FamilyBase> family);

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<FamilyBase>, std::less<>> families_;
  std::set<std::string, std::less<>> sample_names_;  // every name a family's lines can start with
};

}  // namespace dsekp::edge::metrics
