// The dynamic-security plan (see dynsec_plan.hpp).
#include "edge/broker_admin/dynsec_plan.hpp"

#include <algorithm>

namespace dsekp::edge::broker_admin {
namespace {

using nlohmann::json;

constexpr int kGrantPriority = 1;  // checked before the closing denials
constexpr int kDenyPriority = 0;
// What the plugin assumes for an ACL or a role membership given without a priority.
constexpr int kPluginDefaultPriority = -1;

json acl_json(const DynsecAcl& acl) {
  return {{"acltype", acl.type},
          {"topic", acl.topic},
          {"allow", acl.allow},
          {"priority", acl.priority}};
}

json role_json(const std::vector<DynsecAcl>& acls) {
  json out = json::array();
  for (const DynsecAcl& acl : acls) out.push_back(acl_json(acl));
  return out;
}

bool contains(const std::vector<DynsecAcl>& acls, const DynsecAcl& acl) {
  return std::find(acls.begin(), acls.end(), acl) != acls.end();
}

bool is_managed(const json& object) {
  const auto it = object.find("textdescription");
  return it != object.end() && it->is_string() && it->get<std::string>() == kManagedMarker;
}

// The role's ACL commands: what the broker has and we do not want goes, what we want and it
// lacks comes. An ACL is keyed by type and topic in the plugin, so one whose allow or priority
// differs is removed before it is added again.
void role_changes(const std::string& role, const std::vector<DynsecAcl>& wanted,
                  const std::vector<DynsecAcl>& present, std::vector<json>& commands) {
  for (const DynsecAcl& acl : present)
    if (!contains(wanted, acl))
      commands.push_back({{"command", "removeRoleACL"},
                          {"rolename", role},
                          {"acltype", acl.type},
                          {"topic", acl.topic}});
  for (const DynsecAcl& acl : wanted)
    if (!contains(present, acl)) {
      json add = acl_json(acl);
      add["command"] = "addRoleACL";
      add["rolename"] = role;
      commands.push_back(std::move(add));
    }
}

std::string conflict(const char* what, const std::string& name) {
  return std::string("the broker's dynamic-security plugin has a ") + what + " \"" + name +
         "\" that dsekp did not create (its textdescription is not \"" +
         std::string(kManagedMarker) +
         "\"): rename or delete it with mosquitto_ctrl, or the registry entry";
}

}  // namespace

std::string account_role_object(AccountRole role) {
  return std::string("dsekp-") + account_role_name(role);
}

std::string device_role_object(std::string_view dev_id) {
  return "dsekp-device-" + std::string(dev_id);
}

std::vector<DynsecAcl> role_acls(const std::vector<TopicGrant>& grants) {
  std::vector<DynsecAcl> acls;
  for (const TopicGrant& g : grants) {
    if (g.access == TopicAccess::write) {
      acls.push_back({"publishClientSend", g.filter, true, kGrantPriority});
    } else {
      acls.push_back({"subscribePattern", g.filter, true, kGrantPriority});
      acls.push_back({"publishClientReceive", g.filter, true, kGrantPriority});
    }
  }
  // "#" does not match topics that start with '$' (MQTT 4.7.2), hence the broker's two trees
  // by name.
  for (const char* filter : {"#", "$CONTROL/#", "$SYS/#"}) {
    acls.push_back({"publishClientSend", filter, false, kDenyPriority});
    acls.push_back({"subscribePattern", filter, false, kDenyPriority});
  }
  return acls;
}

WantedState wanted_state(const std::vector<BrokerAccount>& devices,
                         const std::vector<ServiceAccount>& accounts, const GrantScope& scope) {
  WantedState wanted;
  for (const AccountRole role : {AccountRole::edge, AccountRole::reader, AccountRole::downlink})
    wanted.roles[account_role_object(role)] = role_acls(account_grants(role, scope));
  for (const ServiceAccount& a : accounts)
    wanted.clients.push_back({a.login, account_role_object(a.role)});
  for (const BrokerAccount& d : devices) {
    const std::string role = device_role_object(d.username);
    wanted.roles[role] = role_acls(device_grants(d.username, scope));
    wanted.clients.push_back({d, role});
  }
  return wanted;
}

RegistryStatus plan_commands(const WantedState& wanted, const BrokerState& broker,
                             const PlanOptions& options, std::vector<json>& commands,
                             PlanSummary& summary) {
  commands.clear();
  summary = {};
  // Names the operator has: neither the object nor the rest of its account is planned.
  std::set<std::string> taken_roles;
  std::set<std::string> taken_clients;
  for (const auto& [name, acls] : wanted.roles)
    if (const auto it = broker.roles.find(name); it != broker.roles.end() && !it->second.managed) {
      taken_roles.insert(name);
      summary.conflicts.push_back(conflict("role", name));
    }
  for (const WantedClient& c : wanted.clients)
    if (const auto it = broker.clients.find(c.login.username);
        it != broker.clients.end() && !it->second.managed) {
      taken_clients.insert(c.login.username);
      summary.conflicts.push_back(conflict("client", c.login.username));
    }

  for (const auto& [name, acls] : wanted.roles) {
    if (taken_roles.count(name) != 0) continue;
    const auto it = broker.roles.find(name);
    if (it == broker.roles.end()) {
      commands.push_back({{"command", "createRole"},
                          {"rolename", name},
                          {"textdescription", kManagedMarker},
                          {"acls", role_json(acls)}});
      ++summary.roles_created;
      continue;
    }
    const std::size_t before = commands.size();
    role_changes(name, acls, it->second.acls, commands);
    if (commands.size() != before) ++summary.roles_changed;
  }

  std::set<std::string> wanted_clients;
  for (const WantedClient& c : wanted.clients) {
    wanted_clients.insert(c.login.username);
    if (taken_clients.count(c.login.username) != 0 || taken_roles.count(c.role) != 0) continue;
    const auto it = broker.clients.find(c.login.username);
    if (it == broker.clients.end()) {
      commands.push_back({{"command", "createClient"},
                          {"username", c.login.username},
                          {"password", c.login.password},
                          {"textdescription", kManagedMarker},
                          {"roles", json::array({{{"rolename", c.role}}})}});
      ++summary.clients_created;
      continue;
    }
    const std::size_t before = commands.size();
    if (options.set_every_password || options.set_password_for.count(c.login.username) != 0)
      commands.push_back({{"command", "setClientPassword"},
                          {"username", c.login.username},
                          {"password", c.login.password}});
    for (const std::string& role : it->second.roles)
      if (role != c.role)
        commands.push_back(
            {{"command", "removeClientRole"}, {"username", c.login.username}, {"rolename", role}});
    if (it->second.roles.count(c.role) == 0)
      commands.push_back(
          {{"command", "addClientRole"}, {"username", c.login.username}, {"rolename", c.role}});
    if (commands.size() != before) ++summary.clients_changed;
  }

  for (const auto& [name, client] : broker.clients)
    if (client.managed && wanted_clients.count(name) == 0) {
      commands.push_back({{"command", "deleteClient"}, {"username", name}});
      ++summary.clients_deleted;
    }
  for (const auto& [name, role] : broker.roles)
    if (role.managed && wanted.roles.count(name) == 0) {
      commands.push_back({{"command", "deleteRole"}, {"rolename", name}});
      ++summary.roles_deleted;
    }
  return {};
}

namespace {

bool string_field(const json& object, const char* key, std::string& out) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

int priority_field(const json& object) {
  const auto it = object.find("priority");
  return it != object.end() && it->is_number_integer() ? it->get<int>() : kPluginDefaultPriority;
}

bool list_of(const json& data, const char* key, const json*& items, std::size_t& total,
             std::string& error) {
  if (!data.is_object() || !data.contains(key) || !data[key].is_array()) {
    error = std::string("the plugin's answer has no \"") + key + "\" list";
    return false;
  }
  items = &data[key];
  const auto it = data.find("totalCount");
  total = it != data.end() && it->is_number_unsigned() ? it->get<std::size_t>() : items->size();
  return true;
}

}  // namespace

bool parse_role_list(const json& data, BrokerState& state, std::size_t& total, std::string& error) {
  const json* roles = nullptr;
  if (!list_of(data, "roles", roles, total, error)) return false;
  for (const json& r : *roles) {
    std::string name;
    if (!r.is_object() || !string_field(r, "rolename", name)) {
      error = "a role without a rolename in the plugin's answer";
      return false;
    }
    BrokerRole role;
    role.managed = is_managed(r);
    if (const auto acls = r.find("acls"); acls != r.end() && acls->is_array()) {
      for (const json& a : *acls) {
        DynsecAcl acl;
        if (!a.is_object() || !string_field(a, "acltype", acl.type) ||
            !string_field(a, "topic", acl.topic)) {
          error = "role \"" + name + "\": an ACL without acltype or topic in the plugin's answer";
          return false;
        }
        const auto allow = a.find("allow");
        acl.allow = allow != a.end() && allow->is_boolean() && allow->get<bool>();
        acl.priority = priority_field(a);
        role.acls.push_back(std::move(acl));
      }
    }
    state.roles[name] = std::move(role);
  }
  return true;
}

bool parse_client_list(const json& data, BrokerState& state, std::size_t& total,
                       std::string& error) {
  const json* clients = nullptr;
  if (!list_of(data, "clients", clients, total, error)) return false;
  for (const json& c : *clients) {
    std::string name;
    if (!c.is_object() || !string_field(c, "username", name)) {
      error = "a client without a username in the plugin's answer";
      return false;
    }
    BrokerClient client;
    client.managed = is_managed(c);
    if (const auto roles = c.find("roles"); roles != c.end() && roles->is_array())
      for (const json& r : *roles)
        if (std::string role; r.is_object() && string_field(r, "rolename", role))
          client.roles.insert(role);
    state.clients[name] = std::move(client);
  }
  return true;
}

}  // namespace dsekp::edge::broker_admin
