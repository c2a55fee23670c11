// The registry's dynamic_security row (see device_registry.hpp, DynamicSecuritySettings).
#include "device_registry.hpp"

namespace dsekp::edge {

RegistryStatus DeviceRegistry::dynamic_security(DynamicSecuritySettings& out) {
  RegistryStatement stmt;
  if (auto s =
          db_.prepare("SELECT host, port, admin_user, admin_password, topic_prefix, psk_baseline, "
                      "home_assistant, synced_generation, republish_topic FROM dynamic_security "
                      "WHERE id = 1",
                      stmt);
      !s.ok())
    return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  if (!row)
    return {RegistryErrc::not_found,
            "the registry keeps no dynamic-security broker (its broker reads the files of "
            "`dsekp keys broker-config --out-dir`)"};
  out.host = stmt.column_text(0);
  out.port = static_cast<std::uint16_t>(stmt.column_int64(1));  // CHECKed 1-65535
  out.admin = {stmt.column_text(2), stmt.column_text(3)};
  out.topic_prefix = stmt.column_text(4);
  out.psk_baseline = stmt.column_int64(5) != 0;
  out.home_assistant = stmt.column_int64(6) != 0;
  out.synced_generation = static_cast<std::uint64_t>(stmt.column_int64(7));
  out.republish_topic = stmt.column_text(8);
  return {};
}

RegistryStatus DeviceRegistry::set_dynamic_security(const DynamicSecuritySettings& settings) {
  RegistryStatement stmt;
  if (auto s = db_.prepare(
          "INSERT OR REPLACE INTO dynamic_security (id, host, port, admin_user, admin_password, "
          "topic_prefix, psk_baseline, home_assistant, synced_generation, republish_topic) VALUES "
          "(1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
          stmt);
      !s.ok())
    return s;
  if (auto s = stmt.bind_text(1, settings.host); !s.ok()) return s;
  if (auto s = stmt.bind_int64(2, settings.port); !s.ok()) return s;
  if (auto s = stmt.bind_text(3, settings.admin.username); !s.ok()) return s;
  if (auto s = stmt.bind_text(4, settings.admin.password); !s.ok()) return s;
  if (auto s = stmt.bind_text(5, settings.topic_prefix); !s.ok()) return s;
  if (auto s = stmt.bind_int64(6, settings.psk_baseline ? 1 : 0); !s.ok()) return s;
  if (auto s = stmt.bind_int64(7, settings.home_assistant ? 1 : 0); !s.ok()) return s;
  if (auto s = stmt.bind_int64(8, static_cast<std::int64_t>(settings.synced_generation)); !s.ok())
    return s;
  if (auto s = stmt.bind_text(9, settings.republish_topic); !s.ok()) return s;
  return stmt.run();
}

RegistryStatus DeviceRegistry::set_dynamic_security_synced(std::uint64_t generation) {
  RegistryStatement stmt;
  if (auto s = db_.prepare(
          "UPDATE dynamic_security SET synced_generation = max(synced_generation, ?1) WHERE id = 1",
          stmt);
      !s.ok())
    return s;
  if (auto s = stmt.bind_int64(1, static_cast<std::int64_t>(generation)); !s.ok()) return s;
  return stmt.run();
}

RegistryStatus DeviceRegistry::clear_dynamic_security() {
  return db_.exec("DELETE FROM dynamic_security");
}

}  // namespace dsekp::edge
