// The metrics an operator alerts on beside the protocol's own (edge_metrics.hpp), all read at
// scrape time:
//   process_*                     the standard process metrics (process_metrics.hpp)
//   dsekp_broker_connected        1 while the MQTT connection is up
//   dsekp_devices_seen, dsekp_devices_silent{over}   device_activity.hpp
// packaging/prometheus/dsekp-alerts.yml alerts on them; packaging/grafana/ plots them.
#pragma once

#include <functional>

#include "edge/daemon/device_activity.hpp"
#include "edge/metrics/metrics_registry.hpp"

namespace dsekp::edge {

void declare_operational_metrics(metrics::Registry& registry,
                                 std::function<bool()> broker_connected, DeviceActivity& activity);

}  // namespace dsekp::edge
