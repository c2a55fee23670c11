// Plain copies of metric values taken at one scrape. The registry produces them, the text writer
// formats them; keeping them apart means the writer never touches an atomic and can be tested on
// hand-made values (the exposition-format spec's own examples).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace dsekp::edge::metrics {

enum class MetricType : std::uint8_t { counter, gauge, histogram };

struct HistogramSnapshot {
  std::vector<double> upper_bounds;       // finite, strictly increasing; +Inf is implied
  std::vector<std::uint64_t> cumulative;  // observations <= upper_bounds[i], one per bound
  std::uint64_t count = 0;                // all observations: the +Inf bucket and _count
  double sum = 0;
};

struct SeriesSnapshot {
  std::vector<std::string> label_values;  // in the order of FamilySnapshot::label_names
  // Counter: std::uint64_t (events are whole numbers, printed exactly); gauge: double;
  // histogram: HistogramSnapshot.
  std::variant<std::uint64_t, double, HistogramSnapshot> value;
};

struct FamilySnapshot {
  std::string name;
  std::string help;
  MetricType type = MetricType::gauge;
  std::vector<std::string> label_names;
  std::vector<SeriesSnapshot> series;  // in declaration order
};

}  // namespace dsekp::edge::metrics
