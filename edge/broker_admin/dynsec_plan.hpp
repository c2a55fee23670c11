// What Mosquitto's dynamic-security plugin must hold for a DSEKP deployment, and the commands
// that bring a broker there from what it holds now. Pure: no I/O (dynsec_sync.hpp runs it).
//
// Objects (every one marked kManagedMarker in its textdescription; nothing else is touched):
//   role dsekp-edge, dsekp-reader, dsekp-downlink   the grants of each account role
//   role dsekp-device-<dev_id>                      one per device: its own topics, spelled out
//   client <user name>                              every device and registry account, with
//                                                   exactly its one role
// The grants are broker_grants.hpp's table, the same as the ACL file's: read = subscribePattern
// + publishClientReceive, write = publishClientSend. Every role also ends in denials of "#",
// "$CONTROL/#" and "$SYS/#" for publishing and subscribing (checked after the grants), so a
// DSEKP account stays closed whatever the broker's defaultACLAccess says.
//
// The commands change only what differs. That matters: the plugin disconnects a client whose
// password or roles change (and one it deletes), so a sync that rewrote every client would drop
// the whole fleet and the edge once per `dsekp keys add`. A client's password is set when it is
// created and when asked (a rotation; `broker-config --reset-passwords` after a broker restored
// from an old copy: passwords cannot be read back from the plugin to compare).
//
// A client or role of the wanted name that lacks the marker belongs to the operator: the plan
// leaves it (and that account's other object) alone and lists it as a conflict rather than take
// it over; everything else, removals included, goes ahead.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "edge/registry/broker_grants.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::edge::broker_admin {

inline constexpr std::string_view kManagedMarker =
    "managed by dsekp keys: edits here are overwritten";

/// One ACL of a role, as the plugin's JSON names it.
struct DynsecAcl {
  std::string type;  // publishClientSend, publishClientReceive, subscribePattern, ...
  std::string topic;
  bool allow = true;
  int priority = 0;

  friend bool operator==(const DynsecAcl&, const DynsecAcl&) = default;
};

struct BrokerRole {
  std::vector<DynsecAcl> acls;
  bool managed = false;
};

struct BrokerClient {
  std::set<std::string> roles;
  bool managed = false;
};

/// What the plugin holds (parse_role_list / parse_client_list fill it).
struct BrokerState {
  std::map<std::string, BrokerRole> roles;
  std::map<std::string, BrokerClient> clients;
};

struct WantedClient {
  BrokerAccount login;
  std::string role;
};

/// What the plugin must hold.
struct WantedState {
  std::map<std::string, std::vector<DynsecAcl>> roles;
  std::vector<WantedClient> clients;
};

[[nodiscard]] std::string account_role_object(AccountRole role);  // "dsekp-edge", ...
[[nodiscard]] std::string device_role_object(std::string_view dev_id);
/// The plugin's ACLs for `grants`, closing denials included.
[[nodiscard]] std::vector<DynsecAcl> role_acls(const std::vector<TopicGrant>& grants);

[[nodiscard]] WantedState wanted_state(const std::vector<BrokerAccount>& devices,
                                       const std::vector<ServiceAccount>& accounts,
                                       const GrantScope& scope);

struct PlanOptions {
  std::set<std::string> set_password_for;  // clients that exist and get their password again
  bool set_every_password = false;
};

/// What the commands do, for the operator.
struct PlanSummary {
  std::size_t clients_created = 0, clients_changed = 0, clients_deleted = 0;
  std::size_t roles_created = 0, roles_changed = 0, roles_deleted = 0;
  /// Wanted names the plugin has without the marker: left alone (and their account's other
  /// object too), everything else planned.
  std::vector<std::string> conflicts;
  /// The registry generation the sync brought the plugin in line with (dynsec_sync.hpp).
  std::uint64_t synced_generation = 0;
};

/// The commands, in the order they must run: roles created or changed, clients created or
/// changed, clients deleted, roles deleted. A wanted name that is the operator's is skipped and
/// listed in summary.conflicts (the rest, removals included, still goes ahead).
RegistryStatus plan_commands(const WantedState& wanted, const BrokerState& broker,
                             const PlanOptions& options, std::vector<nlohmann::json>& commands,
                             PlanSummary& summary);

/// Reads one listRoles / listClients (verbose) response's "data" into `state`; false with
/// `error` for a shape the plugin does not send.
bool parse_role_list(const nlohmann::json& data, BrokerState& state, std::size_t& total,
                     std::string& error);
bool parse_client_list(const nlohmann::json& data, BrokerState& state, std::size_t& total,
                       std::string& error);

}  // namespace dsekp::edge::broker_admin
