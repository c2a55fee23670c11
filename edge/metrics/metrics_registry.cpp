// Registration checks and collection of the metrics registry (see metrics_registry.hpp).
#include "edge/metrics/metrics_registry.hpp"

#include <algorithm>

#include "edge/metrics/metric_names.hpp"

namespace dsekp::edge::metrics {
namespace {

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
  throw std::invalid_argument("metric \"" + name + "\": " + why);
}

// Checks the spec and normalises an unlabelled family to its one series with no label values.
void validate(FamilySpec& spec, MetricType type) {
  if (!is_valid_metric_name(spec.name)) refuse(spec.name, "not a valid Prometheus metric name");
  const bool has_suffix =
      spec.name.size() > kCounterSuffix.size() && spec.name.ends_with(kCounterSuffix);
  if (type == MetricType::counter && !has_suffix) refuse(spec.name, "a counter must end in _total");
  // `_total` promises a counter; rate() over a gauge or histogram named so would mislead.
  if (type != MetricType::counter && spec.name.ends_with(kCounterSuffix)) {
    refuse(spec.name, "only counters may end in _total");
  }
  if (spec.help.empty()) refuse(spec.name, "help text is empty");

  for (std::size_t i = 0; i < spec.label_names.size(); ++i) {
    const std::string& label = spec.label_names[i];
    if (!is_valid_label_name(label)) refuse(spec.name, "invalid label name \"" + label + "\"");
    if (type == MetricType::histogram && label == "le") {
      refuse(spec.name, "label \"le\" is reserved for histogram buckets");
    }
    if (std::find(spec.label_names.begin(), spec.label_names.begin() + static_cast<long>(i),
                  label) != spec.label_names.begin() + static_cast<long>(i)) {
      refuse(spec.name, "label \"" + label + "\" declared twice");
    }
  }

  if (spec.label_names.empty()) {
    if (!(spec.series.empty() || (spec.series.size() == 1 && spec.series.front().empty()))) {
      refuse(spec.name, "label values given for a family without labels");
    }
    spec.series.assign(1, {});
    return;
  }
  if (spec.series.empty()) refuse(spec.name, "labelled family declares no series");
  for (std::size_t i = 0; i < spec.series.size(); ++i) {
    const auto& values = spec.series[i];
    if (values.size() != spec.label_names.size()) {
      refuse(spec.name, "a series has the wrong number of label values");
    }
    // Prometheus treats an empty label value as an absent label.
    if (std::any_of(values.begin(), values.end(), [](const auto& v) { return v.empty(); })) {
      refuse(spec.name, "empty label value");
    }
    if (std::find(spec.series.begin(), spec.series.begin() + static_cast<long>(i), values) !=
        spec.series.begin() + static_cast<long>(i)) {
      refuse(spec.name, "a series is declared twice");
    }
  }
}

// Names the family's exposition lines start with, including the family name itself.
std::vector<std::string> sample_names(const std::string& name, MetricType type) {
  if (type != MetricType::histogram) return {name};
  return {name, name + "_bucket", name + "_sum", name + "_count"};
}

}  // namespace

void Registry::insert_family(const std::string& name, MetricType type,
                             std::unique_ptr<FamilyBase> family) {
  const std::vector<std::string> names = sample_names(name, type);
  std::lock_guard lock(mutex_);
  for (const auto& n : names) {
    if (sample_names_.contains(n)) {
      refuse(name, "collides with an already registered metric (" + n + ")");
    }
  }
  sample_names_.insert(names.begin(), names.end());
  families_.emplace(name, std::move(family));
}

template <class Metric>
Family<Metric>& Registry::insert(std::unique_ptr<Family<Metric>> family, MetricType type) {
  Family<Metric>& ref = *family;
  insert_family(ref.name(), type, std::move(family));
  return ref;
}

Family<Counter>& Registry::add_counter(FamilySpec spec) {
  validate(spec, MetricType::counter);
  return insert(std::make_unique<Family<Counter>>(std::move(spec), MetricType::counter),
                MetricType::counter);
}

Family<Gauge>& Registry::add_gauge(FamilySpec spec) {
  validate(spec, MetricType::gauge);
  return insert(std::make_unique<Family<Gauge>>(std::move(spec), MetricType::gauge),
                MetricType::gauge);
}

Family<Histogram>& Registry::add_histogram(FamilySpec spec, std::vector<double> upper_bounds) {
  validate(spec, MetricType::histogram);
  // Constructing the family builds (and so validates) the buckets before anything is inserted.
  return insert(
      std::make_unique<Family<Histogram>>(std::move(spec), MetricType::histogram, upper_bounds),
      MetricType::histogram);
}

namespace {

class ComputedFamily final : public FamilyBase {
 public:
  ComputedFamily(FamilySpec spec, MetricType type, ReadValues read)
      : spec_(std::move(spec)), type_(type), read_(std::move(read)) {}
  [[nodiscard]] FamilySnapshot snapshot() const override {
    FamilySnapshot s{spec_.name, spec_.help, type_, spec_.label_names, {}};
    const std::vector<double> values = read_();
    for (std::size_t i = 0; i < spec_.series.size(); ++i)
      s.series.push_back(SeriesSnapshot{spec_.series[i], i < values.size() ? values[i] : 0.0});
    return s;
  }

 private:
  FamilySpec spec_;
  MetricType type_;
  ReadValues read_;
};

}  // namespace

void Registry::add_computed(FamilySpec spec, MetricType type, ReadValues read) {
  if (type == MetricType::histogram) refuse(spec.name, "a computed family is a counter or gauge");
  validate(spec, type);
  const std::string name = spec.name;
  insert_family(name, type,
                std::make_unique<ComputedFamily>(std::move(spec), type, std::move(read)));
}

std::vector<FamilySnapshot> Registry::collect() const {
  std::lock_guard lock(mutex_);
  std::vector<FamilySnapshot> out;
  out.reserve(families_.size());
  for (const auto& [name, family] : families_) out.push_back(family->snapshot());
  return out;
}

}  // namespace dsekp::edge::metrics
