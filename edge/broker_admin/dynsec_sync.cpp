// The dynamic-security sync (see dynsec_sync.hpp).
#include "edge/broker_admin/dynsec_sync.hpp"

#include "edge/broker_admin/dynsec_connection.hpp"

namespace dsekp::edge::broker_admin {
namespace {

using nlohmann::json;

constexpr std::size_t kPageSize = 100;  // objects per list answer

// Reads every role and client the plugin holds, a page at a time.
RegistryStatus read_broker_state(PluginConnection& connection, BrokerState& state) {
  for (const char* what : {"listRoles", "listClients"}) {
    std::size_t total = 0;
    for (std::size_t offset = 0; offset == 0 || offset < total; offset += kPageSize) {
      std::vector<json> responses;
      if (auto s = connection.run(
              {{{"command", what}, {"verbose", true}, {"count", kPageSize}, {"offset", offset}}},
              responses);
          !s.ok())
        return s;
      const json& r = responses.front();
      if (r.contains("error"))
        return {RegistryErrc::broker, std::string(what) + " was refused: " + r["error"].dump()};
      std::string error;
      const bool roles = std::string(what) == "listRoles";
      const json data = r.value("data", json::object());
      if (!(roles ? parse_role_list(data, state, total, error)
                  : parse_client_list(data, state, total, error)))
        return {RegistryErrc::broker, std::string(what) + ": " + error};
      if (total == 0) break;
    }
  }
  return {};
}

}  // namespace

RegistryStatus sync_dynamic_security(DeviceRegistry& registry,
                                     const DynamicSecuritySettings& settings,
                                     const PlanOptions& options, PlanSummary& summary) {
  GrantScope scope{settings.topic_prefix, settings.psk_baseline, UplinkTopics::per_device,
                   settings.home_assistant};
  if (auto s = registry.uplink_topics(scope.uplink_topics); !s.ok()) return s;
  std::vector<BrokerAccount> devices;
  if (auto s = registry.device_broker_accounts(devices); !s.ok()) return s;
  std::vector<ServiceAccount> accounts;
  if (auto s = registry.accounts(accounts); !s.ok()) return s;

  std::unique_ptr<PluginConnection> connection;
  if (auto s = PluginConnection::open({settings.host, settings.port, settings.admin}, connection);
      !s.ok())
    return s;
  BrokerState broker;
  if (auto s = read_broker_state(*connection, broker); !s.ok()) return s;
  std::vector<json> commands;
  if (auto s =
          plan_commands(wanted_state(devices, accounts, scope), broker, options, commands, summary);
      !s.ok())
    return s;
  std::vector<json> responses;
  if (auto s = connection->run(commands, responses); !s.ok()) return s;
  for (std::size_t i = 0; i < responses.size(); ++i)
    if (responses[i].contains("error")) {
      const json& c = commands[i];
      const std::string object = c.value("username", c.value("rolename", std::string()));
      return {RegistryErrc::broker, "the dynamic-security plugin refused " +
                                        c.value("command", std::string("a command")) + " " +
                                        object + ": " + responses[i]["error"].dump()};
    }
  return {};
}

}  // namespace dsekp::edge::broker_admin
