// Brings Mosquitto's dynamic-security plugin in line with the registry (dynsec_plan.hpp says
// what that means): read what the plugin holds, plan the difference, run it. `dsekp keys` calls
// it after every change to the registry when the deployment has a dynamic-security broker
// (DeviceRegistry::dynamic_security), and `keys broker-config --dynamic-security` once to set
// the broker up. Idempotent: a second run with nothing changed sends no command at all.
#pragma once

#include "edge/broker_admin/dynsec_plan.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::edge::broker_admin {

/// Syncs the plugin at `settings` with `registry`. Every device changed after
/// settings.synced_generation gets its password set (a rotation whose own sync failed is
/// finished by the next one); on success summary.synced_generation is what the caller records
/// (DeviceRegistry::set_dynamic_security_synced). A name the operator has is left alone and
/// reported as name_conflict after everything else ran; a failure part-way (broker gone, a
/// command refused) leaves the commands before it applied, and rerunning finishes the job.
/// Syncs of one registry take turns (a lock file beside it): the plugin admits one session per
/// admin user name, so two at once would disconnect each other.
RegistryStatus sync_dynamic_security(DeviceRegistry& registry,
                                     const DynamicSecuritySettings& settings,
                                     const PlanOptions& options, PlanSummary& summary);

/// name_conflict if the plugin has a client `username` that dsekp did not create: checked
/// before the registry takes a new device or account of that name.
RegistryStatus check_client_name_free(const DynamicSecuritySettings& settings,
                                      const std::string& username);

}  // namespace dsekp::edge::broker_admin
