// Mosquitto 2.0 security for a DSEKP deployment, generated from the registry: a password file
// (every device, every edge and every other account of the registry) and an ACL file, for the
// classic `password_file` + `acl_file` options with `allow_anonymous false`, plus the
// mosquitto.conf lines that bind each client id to its user name and cap the packet size.
//
// What the ACL grants is broker_grants.hpp's table (anything not granted is denied; anonymous
// clients cannot log in at all). The ACL has no `pattern` line: a pattern applies to every
// account (readers, downlink senders, the operator's own), and one without %u or %c draws a
// warning on every load; the price is a few lines per device, rewritten with passwd on every
// run anyway.
//
// Client ids: `use_username_as_clientid true` makes the broker replace every client id with the
// user name, so no account can connect as another's client id and take over its session (a
// device account could otherwise disconnect the edge and lose what the broker queued for it).
// Each edge therefore needs an account of its own (`dsekp keys account add NAME --role edge`),
// and `dsekp edge send` logs in with a downlink account, never the edge's.
//
// Files: the broker reads `passwd` after dropping to its own user (Debian: mosquitto), so with
// a broker group `passwd` is 0640 and a directory broker-config creates is 0750, both in that
// group; without one, 0600 and 0700 for a broker running as the invoking user. Rerunning gives
// the same modes and group every time.
//
// Accounts the operator keeps outside the registry (a Telegraf reader, a bridge) go into
// `passwd.local` and `acl.local` in the same directory, which broker-config reads and never
// writes (broker_local_files.hpp): their lines are appended to the generated files, and a user
// name that is also a registry account is refused rather than shadowed.
//
// After `keys add/remove/rotate/account`, rerun broker-config and send the broker SIGHUP:
// Mosquitto re-reads both files then. tests/edge_registry/broker_acl_test.cpp proves all of the
// above on a real Mosquitto 2.0.11.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "device_registry.hpp"
#include "registry_status.hpp"
#include "topic_prefix.hpp"

namespace dsekp::edge {

struct BrokerConfigOptions {
  std::string edge_user;      // the default edge account (recorded in the registry)
  std::string topic_prefix;   // P above: "" or e.g. "site1/"
  bool psk_baseline = false;  // grant the paper's psk/data topic (the comparison experiment)
  /// What devices may publish on (write_broker_config takes it from the registry).
  UplinkTopics uplink_topics = UplinkTopics::per_device;
  /// The group the broker reads `passwd` through (see above); empty: none.
  std::string broker_group = {};
  /// Home Assistant discovery: its grants (broker_grants.hpp) and retained messages allowed.
  bool home_assistant = false;
  /// Retained messages allowed (`dsekp edge --republish-retain`); implied by home_assistant.
  bool retain = false;
  /// The readings' base topic as given to `dsekp edge --republish-topic` ("": {prefix}plain).
  std::string republish_topic = {};
};

/// The ACL file's text for `accounts` (the registry's non-device accounts) and the devices'
/// user names, followed by `local_acl` (acl.local's text, or empty).
[[nodiscard]] std::string broker_acl_text(const std::vector<ServiceAccount>& accounts,
                                          const std::vector<std::string>& device_users,
                                          const BrokerConfigOptions& options,
                                          std::string_view local_acl = {});

/// The password file's text: one "$7$" line per account (fresh salts, see mosquitto_password.hpp).
RegistryStatus broker_password_file_text(const std::vector<BrokerAccount>& accounts, Rng& rng,
                                         std::string& out);

/// The mosquitto.conf lines that use the two files (absolute paths).
[[nodiscard]] std::string broker_conf_lines(const std::string& password_file,
                                            const std::string& acl_file,
                                            bool retained_messages = false);
/// The mosquitto.conf lines for a broker whose accounts live in the dynamic-security plugin
/// (edge/broker_admin/): the same listener settings, the plugin instead of the two files.
[[nodiscard]] std::string dynamic_security_conf_lines(bool retained_messages = false);

/// Adds the default downlink account (kDefaultDownlinkUser) when the registry has no downlink
/// account, so that `dsekp edge send` has a login of its own.
RegistryStatus ensure_downlink_account(DeviceRegistry& registry);

/// The name of the downlink account broker-config creates when the registry has none.
inline constexpr std::string_view kDefaultDownlinkUser = "dsekp-admin";

struct BrokerConfigFiles {
  std::string password_file;  // absolute path, mode 0600
  std::string acl_file;       // absolute path, mode 0644 (no secrets in it)
  std::string conf_lines;     // what to put in mosquitto.conf
  std::size_t devices = 0;
  BrokerAccount edge;                    // the default edge's login (its password is secret)
  std::vector<ServiceAccount> accounts;  // every non-device account written
};

/// Records `options.edge_user` as the default edge's broker user in the registry, adds the
/// default downlink account if the registry has no downlink account, then writes `passwd` and
/// `acl` into `out_dir` (created if missing), each replaced atomically, with the operator's
/// `passwd.local` and `acl.local` appended. Fails (and writes nothing) if the broker group does
/// not exist or cannot be given the file, or if passwd.local is open to others, is malformed, or
/// names a registry account.
RegistryStatus write_broker_config(DeviceRegistry& registry, const std::string& out_dir,
                                   const BrokerConfigOptions& options, BrokerConfigFiles& out);

}  // namespace dsekp::edge
