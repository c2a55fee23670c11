// The dynamic-security sync (see dynsec_sync.hpp).
#include "edge/broker_admin/dynsec_sync.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

// An exclusive flock on `<registry>.broker-sync.lock`, released when destroyed.
class SyncLock {
 public:
  explicit SyncLock(const std::string& registry_path) {
    const std::string path = registry_path + ".broker-sync.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0)
      error_ = "cannot lock " + path + ": " + std::strerror(errno);
  }
  ~SyncLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  SyncLock(const SyncLock&) = delete;
  SyncLock& operator=(const SyncLock&) = delete;
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

}  // namespace

RegistryStatus check_client_name_free(const DynamicSecuritySettings& settings,
                                      const std::string& username) {
  std::unique_ptr<PluginConnection> connection;
  if (auto s = PluginConnection::open({settings.host, settings.port, settings.admin}, connection);
      !s.ok())
    return s;
  std::vector<json> responses;
  if (auto s = connection->run({{{"command", "getClient"}, {"username", username}}}, responses);
      !s.ok())
    return s;
  const json& r = responses.front();
  if (r.contains("error")) return {};  // "Client not found"
  const json client = r.value("data", json::object()).value("client", json::object());
  if (client.value("textdescription", std::string()) == kManagedMarker) return {};
  return {RegistryErrc::name_conflict,
          "the broker's dynamic-security plugin already has a client \"" + username +
              "\" that dsekp did not create: pick another name, or rename that client with "
              "mosquitto_ctrl"};
}

RegistryStatus sync_dynamic_security(DeviceRegistry& registry,
                                     const DynamicSecuritySettings& settings,
                                     const PlanOptions& options, PlanSummary& summary) {
  const SyncLock lock(registry.path());
  if (!lock.error().empty()) return {RegistryErrc::io, lock.error()};
  // Read first: a change committed after it is synced now and again next time, never missed.
  std::uint64_t generation = 0;
  if (auto s = registry.generation(generation); !s.ok()) return s;
  GrantScope scope{settings.topic_prefix, settings.psk_baseline, UplinkTopics::per_device,
                   settings.home_assistant, settings.republish_topic};
  if (auto s = registry.uplink_topics(scope.uplink_topics); !s.ok()) return s;
  std::vector<DeviceInfo> infos;
  if (auto s = registry.list(infos); !s.ok()) return s;
  PlanOptions plan = options;
  for (const DeviceInfo& d : infos)
    if (d.generation > settings.synced_generation) plan.set_password_for.insert(d.dev_id);
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
          plan_commands(wanted_state(devices, accounts, scope), broker, plan, commands, summary);
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
  if (!summary.conflicts.empty()) {
    std::string why = summary.conflicts.front();
    if (summary.conflicts.size() > 1)
      why += " (and " + std::to_string(summary.conflicts.size() - 1) + " more)";
    return {RegistryErrc::name_conflict, why + "; everything else is in line"};
  }
  summary.synced_generation = generation;
  return {};
}

}  // namespace dsekp::edge::broker_admin
