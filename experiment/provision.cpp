// Provisioning of the experiment's devices and broker accounts (see provision.hpp).
#include "provision.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "edge/registry/broker_config.hpp"
#include "edge/registry/device_material.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/secure_file.hpp"

namespace dsekp::experiment {
namespace {

void check(const edge::RegistryStatus& status, const std::string& context) {
  if (!status.ok()) throw std::runtime_error(context + ": " + status.message());
}

std::string write_credentials(edge::DeviceRegistry& registry, const std::vector<std::string>& ids,
                              const edge::BrokerAddress& broker, const std::string& path) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& id : ids) {
    edge::DeviceMaterial material;
    check(registry.add(id, material), "cannot register device " + id);
    all.push_back(nlohmann::ordered_json::parse(
        edge::material_json(material, broker, edge::MaterialMode::with_psk_baseline)));
  }
  check(edge::write_file_atomically(path, all.dump(2) + "\n", 0600), "cannot write " + path);
  return path;
}

}  // namespace

std::vector<std::string> device_ids(std::string_view prefix, std::size_t count) {
  const std::size_t width = std::max<std::size_t>(2, std::to_string(count).size());
  std::vector<std::string> ids;
  ids.reserve(count);
  for (std::size_t i = 1; i <= count; ++i) {
    std::string n = std::to_string(i);
    ids.push_back(std::string(prefix) + std::string(width - n.size(), '0') + n);
  }
  return ids;
}

Provisioned provision(const ProvisionRequest& request) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(request.secrets_dir, ec);
  if (ec) throw std::runtime_error("cannot create " + request.secrets_dir + ": " + ec.message());
  fs::permissions(request.secrets_dir, fs::perms::owner_all, ec);
  const fs::path dir = fs::absolute(request.secrets_dir, ec);

  Provisioned out;
  out.registry_db = (dir / "registry.db").string();
  std::unique_ptr<edge::DeviceRegistry> registry;
  check(edge::DeviceRegistry::open(out.registry_db, edge::OpenMode::create_if_missing, registry),
        "cannot create the registry " + out.registry_db);

  // The paper's topics (dsekp/init, dsekp/data), shared by every device.
  check(registry->set_uplink_topics(edge::UplinkTopics::shared), "cannot set the uplink topics");
  edge::BrokerAddress broker;
  check(edge::parse_broker_address(request.broker_address, broker), "broker address");
  out.main_credentials = write_credentials(*registry, request.main_devices, broker,
                                           (dir / "credentials-main.json").string());
  if (!request.trial_devices.empty())
    out.trial_credentials = write_credentials(*registry, request.trial_devices, broker,
                                              (dir / "credentials-trial.json").string());
  if (request.broker_accounts) {
    edge::BrokerConfigFiles files;
    edge::BrokerConfigOptions broker_options;
    broker_options.edge_user = kEdgeBrokerUser;
    broker_options.psk_baseline = true;  // the experiment compares against it
    check(edge::write_broker_config(*registry, (dir / "broker").string(), broker_options, files),
          "cannot write the broker's password file and ACL");
    out.password_file = files.password_file;
    out.acl_file = files.acl_file;
  }
  return out;
}

}  // namespace dsekp::experiment
