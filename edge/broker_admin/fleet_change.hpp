// What a change of the registry's devices or accounts does on the broker, in one place for
// `dsekp keys` and its control API (edge/control_api/):
//   check_broker_name_free()  before a new name enters the registry: refused when the
//                             dynamic-security plugin already has it as one of the operator's
//                             clients (an unreachable broker is not a reason to refuse: the sync
//                             after the change reports it, and a clash found then is left alone)
//   apply_to_broker()         after the change: a deployment on the plugin gets it at once (every
//                             device changed since the plugin was last in line, a rotated one's
//                             new password included); one on the password and ACL files needs
//                             `dsekp keys broker-config` again and a reload, which `files` says.
#pragma once

#include <string>

#include "edge/broker_admin/dynsec_sync.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::edge::broker_admin {

struct BrokerUpdate {
  bool on_plugin = false;  // false: the files, which the operator regenerates
  std::string broker;      // HOST:PORT of the plugin's broker
  PlanSummary summary;     // what the sync changed (on_plugin only)
};

[[nodiscard]] RegistryStatus check_broker_name_free(DeviceRegistry& registry,
                                                    const std::string& name);

/// A failed sync leaves the registry's change in place; `broker-sync` finishes it later.
[[nodiscard]] RegistryStatus apply_to_broker(DeviceRegistry& registry, BrokerUpdate& update);

}  // namespace dsekp::edge::broker_admin
