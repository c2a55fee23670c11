// The operational metrics' families (see operational_metrics.hpp).
#include "edge/daemon/operational_metrics.hpp"

#include <chrono>
#include <utility>
#include <vector>

#include "edge/metrics/process_metrics.hpp"

namespace dsekp::edge {
namespace {

std::uint64_t unix_ms() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace

void declare_operational_metrics(metrics::Registry& registry,
                                 std::function<bool()> broker_connected, DeviceActivity& activity) {
  metrics::declare_process_metrics(registry);
  registry.add_computed(
      {"dsekp_broker_connected", "1 while the edge's MQTT connection to the broker is up.", {}, {}},
      metrics::MetricType::gauge, [connected = std::move(broker_connected)] {
        return std::vector<double>{connected() ? 1.0 : 0.0};
      });
  registry.add_computed(
      {"dsekp_devices_seen",
       "Registered devices with an accepted frame since this edge started.",
       {},
       {}},
      metrics::MetricType::gauge, [&activity] {
        return std::vector<double>{static_cast<double>(activity.counts(unix_ms()).seen)};
      });
  std::vector<std::vector<std::string>> over;
  for (const SilenceThreshold& t : kSilenceThresholds) over.push_back({t.label});
  registry.add_computed(
      {"dsekp_devices_silent",
       "Of dsekp_devices_seen, the devices without an accepted frame for longer than `over`.",
       {"over"},
       std::move(over)},
      metrics::MetricType::gauge, [&activity] {
        const DeviceActivity::Counts counts = activity.counts(unix_ms());
        std::vector<double> values;
        for (const std::size_t n : counts.silent) values.push_back(static_cast<double>(n));
        return values;
      });
}

}  // namespace dsekp::edge
