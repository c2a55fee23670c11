// Devices provisioned elsewhere (see device_registry.hpp, import_devices and adopt_edge_salt).
#include <algorithm>
#include <array>
#include <set>

#include "device_registry.hpp"
#include "text_encoding.hpp"

namespace dsekp::edge {

RegistryStatus DeviceRegistry::import_devices(const std::vector<ImportedDevice>& devices,
                                              std::vector<DeviceMaterial>& out) {
  out.clear();
  SqliteTransaction tx(db_);
  if (auto s = tx.begin(); !s.ok()) return s;
  std::set<std::string, std::less<>> seen;
  for (const ImportedDevice& d : devices) {
    const std::string id(d.dev_id.str());
    if (!seen.insert(id).second)
      return {RegistryErrc::already_exists, "device \"" + id + "\" is twice in the import"};
    // What a broker login and the MQTT CONNECT can carry whatever tool made it: printable ASCII.
    const std::string& pw = d.broker_password;
    if (!pw.empty() &&
        (pw.size() < 8 || pw.size() > 128 ||
         std::any_of(pw.begin(), pw.end(), [](char c) { return c <= ' ' || c > '~'; })))
      return {RegistryErrc::invalid_argument,
              "device \"" + id + "\": a broker password is 8-128 printable ASCII characters"};
    DeviceMaterial m;
    m.credentials.dev_id = d.dev_id;
    if (auto s = draw_secrets(m); !s.ok()) return s;  // the parts the import does not give
    (void)m.credentials.dev_secret.assign(d.dev_secret.view());  // same sizes: cannot fail
    if (d.psk_key) (void)m.credentials.psk_key.assign(d.psk_key->view());
    if (!d.broker_password.empty()) m.broker_password = d.broker_password;
    m.broker = d.broker;
    m.credentials.ratchet = d.ratchet;
    if (auto s = insert_new_device(m); !s.ok()) return s;
    out.push_back(std::move(m));
  }
  if (auto s = tx.commit(); !s.ok()) {
    out.clear();
    return s;
  }
  return {};
}

RegistryStatus DeviceRegistry::adopt_edge_salt(const EdgeSalt& salt) {
  SqliteTransaction tx(db_);
  if (auto s = tx.begin(); !s.ok()) return s;
  std::uint64_t current = 0;
  if (auto s = generation(current); !s.ok()) return s;
  if (current != 0)
    return {RegistryErrc::invalid_argument,
            "this registry has provisioned devices with its own EDGE_SALT, which never changes"};
  RegistryStatement update;
  if (auto s = db_.prepare("UPDATE deployment SET edge_salt = ?1 WHERE id = 1", update); !s.ok())
    return s;
  if (auto s = update.bind_blob(1, salt.view()); !s.ok()) return s;
  if (auto s = update.run(); !s.ok()) return s;
  if (auto s = tx.commit(); !s.ok()) return s;
  return load_edge_salt();
}

}  // namespace dsekp::edge
