// `dsekp keys add|list|show|remove|rotate|broker-config` (see keys_command.hpp).
#include "keys_command.hpp"

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "edge/registry/broker_config.hpp"
#include "edge/registry/device_material.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::cli {
namespace {

using edge::DeviceRegistry;
using edge::OpenMode;
using edge::RegistryStatus;

struct KeysOptions {
  std::string db;
  std::string dev_id;
  std::string broker = "localhost:1883";
  std::string format = "json";
  bool reveal = false;
  bool as_json = false;
  std::string out_dir;
  std::string edge_user;
};

/// Registry failures become exceptions here, at the CLI boundary, where main() prints them.
void check(const RegistryStatus& status) {
  if (!status.ok()) throw std::runtime_error(status.message());
}

std::unique_ptr<DeviceRegistry> open_registry(const std::string& path, OpenMode mode) {
  std::unique_ptr<DeviceRegistry> registry;
  check(DeviceRegistry::open(path, mode, registry));
  return registry;
}

void print_material(const edge::DeviceMaterial& material, const KeysOptions& options) {
  edge::BrokerAddress broker;
  check(edge::parse_broker_address(options.broker, broker));
  std::cout << (options.format == "header" ? edge::material_c_header(material, broker)
                                           : edge::material_json(material, broker));
}

nlohmann::ordered_json info_json(const edge::DeviceInfo& info) {
  return {{"dev_id", info.dev_id},
          {"generation", info.generation},
          {"created_ms", info.created_ms},
          {"rotated_ms", info.rotated_ms ? nlohmann::ordered_json(*info.rotated_ms) : nullptr}};
}

void run_add(const KeysOptions& options) {
  // Validate the broker address before creating anything.
  edge::BrokerAddress broker;
  check(edge::parse_broker_address(options.broker, broker));
  auto registry = open_registry(options.db, OpenMode::create_if_missing);
  edge::DeviceMaterial material;
  check(registry->add(options.dev_id, material));
  print_material(material, options);
  std::fprintf(stderr,
               "dsekp keys: added %s (generation %llu). Rerun `dsekp keys broker-config` and "
               "reload the broker (SIGHUP) so that it can log in.\n",
               options.dev_id.c_str(),
               static_cast<unsigned long long>(material.credentials.generation));
}

void run_rotate(const KeysOptions& options) {
  edge::BrokerAddress broker;
  check(edge::parse_broker_address(options.broker, broker));
  auto registry = open_registry(options.db, OpenMode::existing_only);
  edge::DeviceMaterial material;
  check(registry->rotate(options.dev_id, material));
  print_material(material, options);
  std::fprintf(stderr,
               "dsekp keys: rotated %s (generation %llu): DEV_SECRET, PSK key and broker password "
               "are new. The edge drops the device's sessions; re-provision the device, rerun "
               "`dsekp keys broker-config` and reload the broker (SIGHUP).\n",
               options.dev_id.c_str(),
               static_cast<unsigned long long>(material.credentials.generation));
}

void run_remove(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  check(registry->remove(options.dev_id));
  std::fprintf(stderr,
               "dsekp keys: removed %s. The edge drops its sessions; rerun `dsekp keys "
               "broker-config` and reload the broker (SIGHUP) to revoke its broker login.\n",
               options.dev_id.c_str());
}

void run_show(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  if (options.reveal) {
    edge::DeviceMaterial material;
    check(registry->material(options.dev_id, material));
    print_material(material, options);
    return;
  }
  edge::DeviceInfo info;
  check(registry->info(options.dev_id, info));
  std::cout << info_json(info).dump(2) << "\n";
}

void run_list(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  std::vector<edge::DeviceInfo> devices;
  check(registry->list(devices));
  if (options.as_json) {
    auto out = nlohmann::ordered_json::array();
    for (const auto& d : devices) out.push_back(info_json(d));
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::printf("%-40s %10s %15s %15s\n", "dev_id", "generation", "created_ms", "rotated_ms");
  for (const auto& d : devices) {
    const std::string rotated = d.rotated_ms ? std::to_string(*d.rotated_ms) : "-";
    std::printf("%-40s %10llu %15lld %15s\n", d.dev_id.c_str(),
                static_cast<unsigned long long>(d.generation), static_cast<long long>(d.created_ms),
                rotated.c_str());
  }
}

void run_broker_config(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  edge::BrokerConfigFiles files;
  check(edge::write_broker_config(*registry, options.out_dir, options.edge_user, files));
  std::cout << files.conf_lines;
  std::fprintf(stderr,
               "dsekp keys: wrote %s (%zu devices + edge user %s) and %s. The edge logs in as %s "
               "with the password stored in the registry%s.\n",
               files.password_file.c_str(), files.devices, files.edge.username.c_str(),
               files.acl_file.c_str(), files.edge.username.c_str(),
               options.reveal ? "" : " (--reveal prints it)");
  if (options.reveal) std::cout << "# edge broker password: " << files.edge.password << "\n";
}

void add_db_option(CLI::App* command, KeysOptions& options) {
  command->add_option("--db", options.db, "Registry database (SQLite, mode 0600)")->required();
}

void add_dev_id(CLI::App* command, KeysOptions& options) {
  command->add_option("DEV_ID", options.dev_id, "Device id: 1-64 of [A-Za-z0-9._-]")->required();
}

void add_material_options(CLI::App* command, KeysOptions& options) {
  command->add_option("--broker", options.broker, "Broker the device connects to, HOST:PORT")
      ->capture_default_str();
  command->add_option("--format", options.format, "Material as JSON or a C header for firmware")
      ->check(CLI::IsMember({"json", "header"}))
      ->capture_default_str();
}

}  // namespace

void add_keys_command(CLI::App& app) {
  CLI::App* keys = app.add_subcommand(
      "keys", "Device registry: provision, list, rotate and remove devices; broker security");
  keys->require_subcommand(1);

  auto o = std::make_shared<KeysOptions>();

  CLI::App* add = keys->add_subcommand(
      "add", "Register a device with fresh keys and print its provisioning material (secret)");
  add_dev_id(add, *o);
  add_db_option(add, *o);
  add_material_options(add, *o);
  add->callback([o] { run_add(*o); });

  CLI::App* list = keys->add_subcommand("list", "List registered devices (no secrets)");
  add_db_option(list, *o);
  list->add_flag("--json", o->as_json, "Print JSON instead of a table");
  list->callback([o] { run_list(*o); });

  CLI::App* show = keys->add_subcommand("show", "Show one device (secrets only with --reveal)");
  add_dev_id(show, *o);
  add_db_option(show, *o);
  show->add_flag("--reveal", o->reveal, "Print the device's provisioning material (secret)");
  add_material_options(show, *o);
  show->callback([o] { run_show(*o); });

  CLI::App* remove = keys->add_subcommand("remove", "Remove a device and wipe its keys");
  add_dev_id(remove, *o);
  add_db_option(remove, *o);
  remove->callback([o] { run_remove(*o); });

  CLI::App* rotate = keys->add_subcommand(
      "rotate", "Replace a device's DEV_SECRET, PSK key and broker password; print the material");
  add_dev_id(rotate, *o);
  add_db_option(rotate, *o);
  add_material_options(rotate, *o);
  rotate->callback([o] { run_rotate(*o); });

  CLI::App* broker = keys->add_subcommand(
      "broker-config",
      "Write the Mosquitto password and ACL files; print the mosquitto.conf lines");
  add_db_option(broker, *o);
  broker->add_option("--out-dir", o->out_dir, "Directory for the passwd and acl files")->required();
  broker->add_option("--edge-user", o->edge_user, "The edge's broker user name")->required();
  broker->add_flag("--reveal", o->reveal, "Also print the edge's broker password");
  broker->callback([o] { run_broker_config(*o); });
}

}  // namespace dsekp::cli
