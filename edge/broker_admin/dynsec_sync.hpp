// Brings Mosquitto's dynamic-security plugin in line with the registry (dynsec_plan.hpp says
// what that means): read what the plugin holds, plan the difference, run it. `dsekp keys` calls
// it after every change to the registry when the deployment has a dynamic-security broker
// (DeviceRegistry::dynamic_security), and `keys broker-config --dynamic-security` once to set
// the broker up. Idempotent: a second run with nothing changed sends no command at all.
#pragma once

#include "edge/broker_admin/dynsec_plan.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::edge::broker_admin {

/// Syncs the plugin at `settings` with `registry`. Nothing changes on a name_conflict; a
/// failure part-way (broker gone, a command refused) leaves the commands before it applied,
/// and rerunning finishes the job.
RegistryStatus sync_dynamic_security(DeviceRegistry& registry,
                                     const DynamicSecuritySettings& settings,
                                     const PlanOptions& options, PlanSummary& summary);

}  // namespace dsekp::edge::broker_admin
