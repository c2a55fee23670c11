// Mosquitto 2.0 security for a DSEKP deployment, generated from the registry: a password file
// (every device plus the edge) and an ACL file, for the classic `password_file` + `acl_file`
// options with `allow_anonymous false`.
//
// What the ACL grants (anything not granted is denied; anonymous clients cannot log in at all):
//   the edge user   reads dsekp/init, dsekp/data, psk/data (all device traffic);
//                   writes dsekp/init/ack/+ and dsekp/down/+ (every device's ACK and downlink).
//   each device     (user name = dev_id, through %u patterns, so the ACL needs no per-device
//                   lines and stays valid as devices come and go) writes dsekp/init, dsekp/data,
//                   psk/data; reads only dsekp/init/ack/<its dev_id> and dsekp/down/<its dev_id>.
// Hence a device cannot read another device's ACKs or anyone's uplink traffic, and cannot
// publish an ACK or a downlink (which would let it jam or probe another device).
// The %u patterns apply to the edge user as well (Mosquitto has no per-user opt-out); that only
// lets the edge publish uplink frames it could forge anyway and read topics named after itself.
//
// After `keys add/remove/rotate`, rerun broker-config and send the broker SIGHUP: Mosquitto
// re-reads both files then. tests/edge_registry/broker_acl_test.cpp proves all of the above on a
// real Mosquitto 2.0.11.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "device_registry.hpp"
#include "registry_status.hpp"

namespace dsekp::edge {

/// The ACL file's text for the given edge user.
[[nodiscard]] std::string broker_acl_text(std::string_view edge_user);

/// The password file's text: one "$7$" line per account (fresh salts, see mosquitto_password.hpp).
RegistryStatus broker_password_file_text(const std::vector<BrokerAccount>& accounts, Rng& rng,
                                         std::string& out);

/// The mosquitto.conf lines that use the two files (absolute paths).
[[nodiscard]] std::string broker_conf_lines(const std::string& password_file,
                                            const std::string& acl_file);

struct BrokerConfigFiles {
  std::string password_file;  // absolute path, mode 0600
  std::string acl_file;       // absolute path, mode 0644 (no secrets in it)
  std::string conf_lines;     // what to put in mosquitto.conf
  std::size_t devices = 0;
  BrokerAccount edge;  // the edge's login (its password is secret)
};

/// Records `edge_user` as the edge's broker user in the registry, then writes `passwd` and `acl`
/// into `out_dir` (created 0700 if missing), each replaced atomically.
RegistryStatus write_broker_config(DeviceRegistry& registry, const std::string& out_dir,
                                   std::string_view edge_user, BrokerConfigFiles& out);

}  // namespace dsekp::edge
