// The broker side of a fleet change (see fleet_change.hpp).
#include "edge/broker_admin/fleet_change.hpp"

namespace dsekp::edge::broker_admin {

RegistryStatus check_broker_name_free(DeviceRegistry& registry, const std::string& name) {
  DynamicSecuritySettings settings;
  if (const RegistryStatus s = registry.dynamic_security(settings); !s.ok())
    return s.code() == RegistryErrc::not_found ? RegistryStatus{} : s;
  if (const RegistryStatus s = check_client_name_free(settings, name);
      s.code() != RegistryErrc::broker)
    return s;
  return {};
}

RegistryStatus apply_to_broker(DeviceRegistry& registry, BrokerUpdate& update) {
  update = {};
  DynamicSecuritySettings settings;
  if (const RegistryStatus s = registry.dynamic_security(settings); !s.ok())
    return s.code() == RegistryErrc::not_found ? RegistryStatus{} : s;
  update.on_plugin = true;
  update.broker = settings.host + ":" + std::to_string(settings.port);
  if (const RegistryStatus s = sync_dynamic_security(registry, settings, {}, update.summary);
      !s.ok())
    return s;
  return registry.set_dynamic_security_synced(update.summary.synced_generation);
}

}  // namespace dsekp::edge::broker_admin
