// `dsekp keys add|list|show|remove|rotate|broker-config` (see keys_command.hpp).
#include "keys_command.hpp"

#include <grp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyze/csv_reader.hpp"
#include "analyze/error.hpp"
#include "device/credentials.hpp"
#include "dsekp/bytes.hpp"
#include "dsekp/edge_session.hpp"
#include "edge/broker_admin/dynsec_connection.hpp"
#include "edge/broker_admin/dynsec_sync.hpp"
#include "edge/broker_admin/fleet_change.hpp"
#include "edge/broker_admin/rabbitmq_definitions.hpp"
#include "edge/control_api/device_json.hpp"
#include "edge/daemon/state_inspect.hpp"
#include "edge/daemon/state_reset.hpp"
#include "edge/registry/broker_config.hpp"
#include "edge/registry/device_material.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/republish_topics.hpp"
#include "edge/registry/secure_file.hpp"
#include "edge/registry/text_encoding.hpp"
#include "edge/sinks/server_csv_format.hpp"
#include "keys_serve_command.hpp"
#include "usage_error.hpp"

namespace dsekp::cli {
namespace {

using edge::DeviceRegistry;
using edge::OpenMode;
using edge::RegistryStatus;

// Debian's mosquitto package runs the broker as user and group mosquitto. The files go to that
// group by default when this process can give them to it (root, or a member); otherwise they
// stay private to the invoking user (e.g. the dsekp user of the package, whose files an
// administrator installs for the broker).
std::string default_broker_group() {
  constexpr const char* kDebianBrokerGroup = "mosquitto";
  const struct group* g = ::getgrnam(kDebianBrokerGroup);
  if (g == nullptr) return {};
  if (::geteuid() == 0 || ::getegid() == g->gr_gid) return kDebianBrokerGroup;
  std::vector<gid_t> groups(static_cast<std::size_t>(std::max(::getgroups(0, nullptr), 0)));
  const int n = ::getgroups(static_cast<int>(groups.size()), groups.data());
  for (int i = 0; i < n; ++i)
    if (groups[static_cast<std::size_t>(i)] == g->gr_gid) return kDebianBrokerGroup;
  return {};
}

// A device added without --broker connects here (the broker on the edge's machine).
constexpr const char* kDefaultDeviceBroker = "localhost:1883";

struct KeysOptions {
  std::string db;
  std::string dev_id;
  std::string broker;  // empty: the one recorded with the device, else kDefaultDeviceBroker
  std::string format = "json";
  bool reveal = false;
  bool as_json = false;
  bool psk_baseline = false;
  bool ratchet = false;  // add: the device ratchets its secret (PROTOCOL.md 6.6)
  bool force = false;    // reset-state: also a ratcheting device beyond the look-ahead
  std::uint32_t ratchet_lookahead =
      dsekp::EdgeConfig{}.ratchet_lookahead;  // reset-state: the edge's
  std::string ratchet_mode;                   // rotate: "on", "off"; empty keeps the recorded mode
  std::string out_dir;
  std::string out_file;  // material to this file (0600) instead of stdout
  std::string edge_user;
  std::string prefix;
  std::string role;
  std::string uplink_topics;                // empty: show the current setting
  std::string import_file;                  // `keys import FILE`
  std::string import_format;                // json, csv; empty: by the file's extension
  std::optional<std::string> broker_group;  // unset: "mosquitto" where that group exists
  std::string dynamic_security;             // HOST:PORT of a broker with the plugin
  std::string rabbitmq_definitions;         // broker-config: RabbitMQ definitions to this file
  std::string amqp_queue = "dsekp-uplink";  // broker-config: the edges' --amqp-queue
  std::string admin_user;                   // the plugin's admin
  std::string admin_password_file;          // else DSEKP_BROKER_ADMIN_PASSWORD
  bool reset_passwords = false;
  bool home_assistant = false;  // broker-config: discovery grants, retained messages
  bool retain = false;          // broker-config: retained messages allowed
  std::string republish_topic;  // broker-config: the base `dsekp edge --republish-topic` uses
  bool allow_unprivileged_port = false;
  edge::daemon::StateLocation state;  // registry_db is filled from `db` when used
};

/// Registry failures become exceptions here, at the CLI boundary, where main() prints them.
void check(const RegistryStatus& status) {
  if (!status.ok()) throw std::runtime_error(status.message());
}

/// Refuses an --out FILE that cannot be written before the registry changes: the material of an
/// add or a rotate exists only once the registry has it.
void check_out_file_writable(const KeysOptions& options) {
  if (options.out_file.empty()) return;
  std::filesystem::path parent = std::filesystem::path(options.out_file).parent_path();
  if (parent.empty()) parent = ".";
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error("--out " + options.out_file + ": cannot write into " +
                             parent.string() + ": " + std::strerror(errno));
}

/// --broker's HOST:PORT, or a usage error (exit 2) naming what is wrong with it.
edge::BrokerAddress broker_argument(const std::string& text) {
  edge::BrokerAddress broker;
  if (const auto s = edge::parse_broker_address(text, broker); !s.ok())
    throw UsageError("--broker: " + s.message());
  return broker;
}

std::unique_ptr<DeviceRegistry> open_registry(const std::string& path, OpenMode mode) {
  std::unique_ptr<DeviceRegistry> registry;
  check(DeviceRegistry::open(path, mode, registry));
  return registry;
}

/// After a registry change (edge/broker_admin/fleet_change.hpp), said on stderr.
void apply_to_broker(DeviceRegistry& registry, const std::string& what) {
  edge::broker_admin::BrokerUpdate update;
  const RegistryStatus s = edge::broker_admin::apply_to_broker(registry, update);
  if (!s.ok() && update.on_plugin)
    throw std::runtime_error(what + " in the registry, but the broker at " + update.broker +
                             " was not updated: " + s.message() +
                             ". Run `dsekp keys broker-sync --db " + registry.path() +
                             "` once that is fixed");
  check(s);
  if (!update.on_plugin) {
    std::fprintf(stderr,
                 "dsekp keys: %s. Rerun `dsekp keys broker-config` and reload the broker (SIGHUP) "
                 "so that it takes the change.\n",
                 what.c_str());
    return;
  }
  std::fprintf(stderr,
               "dsekp keys: %s; the broker's dynamic-security plugin has it now (clients: %zu "
               "created, %zu changed, %zu deleted).\n",
               what.c_str(), update.summary.clients_created, update.summary.clients_changed,
               update.summary.clients_deleted);
}

void check_broker_name_free(DeviceRegistry& registry, const std::string& name) {
  check(edge::broker_admin::check_broker_name_free(registry, name));
}

void print_material(const edge::DeviceMaterial& material, const KeysOptions& options) {
  const edge::BrokerAddress broker =
      broker_argument(!options.broker.empty()    ? options.broker
                      : !material.broker.empty() ? material.broker
                                                 : std::string(kDefaultDeviceBroker));
  const auto mode =
      options.psk_baseline ? edge::MaterialMode::with_psk_baseline : edge::MaterialMode::dsekp_only;
  const std::string text = options.format == "header"
                               ? edge::material_c_header(material, broker, mode)
                               : edge::material_json(material, broker, mode);
  if (options.out_file.empty()) {
    std::cout << text;
    return;
  }
  // The material holds DEV_SECRET: a file of its own, 0600 from its first byte (a shell's
  // `> FILE` would leave it as the umask says, usually 0644).
  if (const auto s = edge::write_file_atomically(options.out_file, text, 0600); !s.ok())
    throw std::runtime_error(s.message() + " (the registry has the device: `dsekp keys show " +
                             material.broker_username +
                             " --reveal --out FILE` writes its material again)");
  std::fprintf(stderr, "dsekp keys: wrote the material of %s to %s (mode 0600).\n",
               material.broker_username.c_str(), options.out_file.c_str());
}

std::string utc_time(std::int64_t unix_ms) {
  return edge::sinks::iso8601_utc_ms(
      static_cast<std::uint64_t>(std::max<std::int64_t>(unix_ms, 0)));
}

nlohmann::ordered_json info_json(const edge::DeviceInfo& info) {
  return edge::control_api::device_info_json(info);
}

/// A firmware header names every topic with the deployment's prefix, and the SDK holds at most
/// kFirmwareTopicPrefixMax characters of it: refused before the registry changes.
void check_header_possible(edge::DeviceRegistry& registry, const KeysOptions& options) {
  if (options.format != "header") return;
  std::string prefix;
  check(registry.topic_prefix(prefix));
  if (prefix.size() > edge::kFirmwareTopicPrefixMax)
    throw std::runtime_error(
        "--format header: the deployment's topic prefix \"" + prefix + "\" is longer than the " +
        std::to_string(edge::kFirmwareTopicPrefixMax) + " characters the device SDK holds");
}

void run_add(const KeysOptions& options) {
  const std::string broker = options.broker.empty() ? kDefaultDeviceBroker : options.broker;
  (void)broker_argument(broker);  // before anything is created
  check_out_file_writable(options);
  auto registry = open_registry(options.db, OpenMode::create_if_missing);
  check_header_possible(*registry, options);
  check_broker_name_free(*registry, options.dev_id);
  edge::DeviceMaterial material;
  check(registry->add(options.dev_id, material, broker, options.ratchet));
  print_material(material, options);
  apply_to_broker(*registry, "added " + options.dev_id + " (generation " +
                                 std::to_string(material.credentials.generation) + ")");
}

void run_rotate(const KeysOptions& options) {
  if (!options.broker.empty()) (void)broker_argument(options.broker);  // before the old keys go
  check_out_file_writable(options);
  auto registry = open_registry(options.db, OpenMode::existing_only);
  check_header_possible(*registry, options);
  edge::DeviceInfo existing;
  check(registry->info(options.dev_id, existing));
  edge::DeviceMaterial material;
  std::optional<bool> ratchet;
  if (!options.ratchet_mode.empty()) ratchet = options.ratchet_mode == "on";
  check(registry->rotate(options.dev_id, material, options.broker, ratchet));
  print_material(material, options);
  std::fprintf(stderr,
               "dsekp keys: DEV_SECRET, PSK key and broker password of %s are new; the edge drops "
               "its sessions: re-provision the device.\n",
               options.dev_id.c_str());
  apply_to_broker(*registry, "rotated " + options.dev_id + " (generation " +
                                 std::to_string(material.credentials.generation) + ")");
}

/// Removes the device's session state (keys, windows) from the edge's store; says what it did.
void remove_state(const KeysOptions& options, const char* why) {
  edge::daemon::StateLocation where = options.state;
  where.registry_db = options.db;
  if (const char* password = std::getenv("DSEKP_REDIS_PASSWORD")) where.store_password = password;
  bool found = false;
  std::string error;
  if (!edge::daemon::reset_device_state(where, options.dev_id, found, error))
    throw std::runtime_error("state of " + options.dev_id + ": " + error);
  std::fprintf(stderr, "dsekp keys: %s %s%s.\n",
               found ? "removed the stored state of" : "no stored state for",
               options.dev_id.c_str(), found ? why : "");
}

void run_remove(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  check(registry->remove(options.dev_id));
  remove_state(options, " (its session keys are gone)");
  apply_to_broker(*registry, "removed " + options.dev_id);
}

// The columns a CSV import may have, as the material JSON names them (broker_password goes to
// broker.password); dev_id and dev_secret_hex are required, edge_salt_hex defaults to the
// registry's; ratchet is true or 1 for a device that ratchets its secret.
class CsvImport final : public analyze::CsvSink {
 public:
  explicit CsvImport(std::string default_salt_hex)
      : default_salt_hex_(std::move(default_salt_hex)) {}

  std::vector<bool> on_header(std::span<const std::string_view> names) override {
    static const std::vector<std::string_view> known = {
        "dev_id",          "dev_secret_hex", "edge_salt_hex", "psk_key_hex",
        "broker_password", "broker",         "ratchet"};
    for (const std::string_view n : names) {
      if (std::find(known.begin(), known.end(), n) == known.end())
        throw std::runtime_error("import: unknown CSV column \"" + std::string(n) +
                                 "\" (known: dev_id, dev_secret_hex, edge_salt_hex, psk_key_hex, "
                                 "broker_password, broker, ratchet)");
      names_.emplace_back(n);
    }
    for (const char* required : {"dev_id", "dev_secret_hex"})
      if (std::find(names_.begin(), names_.end(), required) == names_.end())
        throw std::runtime_error(std::string("import: the CSV has no ") + required + " column");
    return std::vector<bool>(names.size(), true);
  }
  void on_record(const analyze::CsvRecord& record) override {
    nlohmann::json object{{"edge_salt_hex", default_salt_hex_}};
    std::string broker;
    for (std::size_t i = 0; i < names_.size() && i < record.field_count; ++i) {
      const std::string value(record.fields[i]);
      if (names_[i] == "broker_password")
        object["broker"]["password"] = value;
      else if (names_[i] == "broker")
        broker = value;
      else if (names_[i] == "ratchet")
        object["ratchet"] = value == "true" || value == "1";
      else if (!value.empty())
        object[names_[i]] = value;
    }
    // A device's broker login is its dev_id.
    if (object.contains("broker") && object.contains("dev_id"))
      object["broker"]["username"] = object["dev_id"];
    objects.push_back(std::move(object));
    brokers.push_back(std::move(broker));
  }
  void on_malformed(std::uint64_t line, const std::string& reason) override {
    throw std::runtime_error("import: line " + std::to_string(line) + ": " + reason);
  }

  nlohmann::json objects = nlohmann::json::array();
  std::vector<std::string> brokers;  // per object, HOST:PORT or empty

 private:
  std::string default_salt_hex_;
  std::vector<std::string> names_;
};

// `keys import FILE`: devices provisioned elsewhere (another registry's `keys export`, a fleet
// tool's CSV), registered with the secrets they hold. Into a registry that has never held a
// device, the devices' EDGE_SALT is adopted; otherwise it must be the registry's.
void run_import(const KeysOptions& options) {
  const bool csv = options.import_format == "csv" ||
                   (options.import_format.empty() && options.import_file.ends_with(".csv"));
  auto registry = open_registry(options.db, OpenMode::create_if_missing);
  const std::string registry_salt = edge::to_hex(registry->edge_salt().view());
  nlohmann::json objects;
  std::vector<std::string> brokers;
  if (csv) {
    CsvImport sink(registry_salt);
    try {
      (void)analyze::read_csv(options.import_file, sink);
    } catch (const analyze::AnalyzeError& e) {
      throw std::runtime_error(std::string("import: ") + e.what());
    }
    objects = std::move(sink.objects);
    brokers = std::move(sink.brokers);
  } else {
    std::string text;
    check(edge::read_trusted_file(options.import_file, 64u << 20, false, text));
    objects = nlohmann::json::parse(text, nullptr, false);
    if (objects.is_object()) objects = nlohmann::json::array({objects});
    if (!objects.is_array())
      throw std::runtime_error("import: " + options.import_file + " is not JSON");
    for (const auto& o : objects) {
      std::string broker;
      if (o.is_object() && o.contains("broker") && o["broker"].is_object() &&
          o["broker"].contains("host") && o["broker"].contains("port"))
        broker = o["broker"]["host"].get<std::string>() + ":" + o["broker"]["port"].dump();
      brokers.push_back(std::move(broker));
    }
  }
  // One parser of device material: the simulator's (device/credentials.hpp).
  std::vector<device::ProvisionedDevice> parsed;
  try {
    parsed = device::parse_credentials(objects.dump(), options.import_file);
  } catch (const device::CredentialsError& e) {
    throw std::runtime_error(std::string("import: ") + e.what());
  }
  const std::string salt = edge::to_hex(parsed.front().credentials.edge_salt.view());
  for (const auto& d : parsed)
    if (edge::to_hex(d.credentials.edge_salt.view()) != salt)
      throw std::runtime_error("import: the devices hold different EDGE_SALTs (" +
                               std::string(d.credentials.dev_id.str()) +
                               "): import each deployment into a registry of its own");
  if (salt != registry_salt) {
    if (const auto s = registry->adopt_edge_salt(parsed.front().credentials.edge_salt); !s.ok())
      throw std::runtime_error("import: the devices hold another EDGE_SALT than this registry (" +
                               s.message() + "): import them into a new registry");
    std::fprintf(stderr, "dsekp keys: the new registry takes the devices' EDGE_SALT.\n");
  }
  std::vector<edge::ImportedDevice> devices;
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    edge::ImportedDevice d;
    d.dev_id = parsed[i].credentials.dev_id;
    (void)d.dev_secret.assign(parsed[i].credentials.dev_secret.view());
    if (parsed[i].has_psk_key) {
      d.psk_key.emplace();
      (void)d.psk_key->assign(parsed[i].psk_key.view());
    }
    d.broker_password = parsed[i].password;
    d.ratchet = parsed[i].ratchet;
    if (i < brokers.size() && !brokers[i].empty()) {
      (void)broker_argument(brokers[i]);
      d.broker = brokers[i];
    }
    if (!options.broker.empty()) d.broker = options.broker;
    devices.push_back(std::move(d));
  }
  if (!options.broker.empty()) (void)broker_argument(options.broker);
  std::vector<edge::DeviceMaterial> added;
  check(registry->import_devices(devices, added));
  apply_to_broker(*registry, "imported " + std::to_string(added.size()) + " devices");
}

// `keys export --out FILE`: every device's material (what `keys show --reveal` prints), as one
// JSON array that `keys import` and `dsekp device --credentials` read. Secret: 0600, never stdout.
void run_export(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  std::vector<edge::DeviceInfo> devices;
  check(registry->list(devices));
  const auto mode =
      options.psk_baseline ? edge::MaterialMode::with_psk_baseline : edge::MaterialMode::dsekp_only;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  std::size_t written = 0;
  for (const auto& d : devices) {
    edge::DeviceMaterial material;
    if (const edge::RegistryStatus s = registry->material(d.dev_id, material);
        s.code() == edge::RegistryErrc::secret_erased) {
      // Nothing to carry: its only secret is in the edge's state (PROTOCOL.md 6.6).
      std::fprintf(stderr, "dsekp keys: %s left out: %s\n", d.dev_id.c_str(), s.message().c_str());
      continue;
    } else {
      check(s);
    }
    const edge::BrokerAddress broker =
        broker_argument(!options.broker.empty()    ? options.broker
                        : !material.broker.empty() ? material.broker
                                                   : std::string(kDefaultDeviceBroker));
    all.push_back(nlohmann::ordered_json::parse(edge::material_json(material, broker, mode)));
    ++written;
  }
  check(edge::write_file_atomically(options.out_file, all.dump(2) + "\n", 0600));
  std::fprintf(stderr, "dsekp keys: wrote the material of %zu devices to %s (mode 0600).\n",
               written, options.out_file.c_str());
}

/// The state location of `options`, with the registry and the Redis password filled in.
edge::daemon::StateLocation state_location(const KeysOptions& options) {
  edge::daemon::StateLocation where = options.state;
  where.registry_db = options.db;
  if (const char* password = std::getenv("DSEKP_REDIS_PASSWORD")) where.store_password = password;
  return where;
}

/// A ratcheting device's stored state holds the only copy of its current secret (PROTOCOL.md
/// 6.6): after a reset the edge starts from the provisioned secret again and lets the device in
/// only if it is at most the look-ahead past it. Refused beyond that unless forced.
void check_ratchet_reset(const edge::DeviceInfo& info, const KeysOptions& options) {
  if (info.secret_erased_ms && !options.force)
    throw UsageError("reset-state: " + options.dev_id +
                     " ratchets its secret and its provisioned secret was erased: its stored "
                     "state holds the only copy of its secret, and removing it would lock it out "
                     "until it is re-provisioned. Rotate it (dsekp keys rotate), or pass --force");
  std::optional<std::uint32_t> epoch;
  std::string error;
  if (!edge::daemon::read_ratchet_epoch(state_location(options), options.dev_id, epoch, error)) {
    std::fprintf(stderr,
                 "dsekp keys: %s ratchets its secret and its state cannot be read (%s); after "
                 "the reset it gets in only if it is at most %u sessions past its provisioning, "
                 "else rotate it.\n",
                 options.dev_id.c_str(), error.c_str(), options.ratchet_lookahead);
    return;
  }
  // The device may be one step ahead of its stored state (a confirmation not yet seen).
  if (epoch && *epoch + 1 > options.ratchet_lookahead && !options.force)
    throw UsageError("reset-state: " + options.dev_id + " ratchets its secret and is " +
                     std::to_string(*epoch) +
                     " sessions past its provisioning (and may be one more), beyond the "
                     "edge's look-ahead of " +
                     std::to_string(options.ratchet_lookahead) +
                     ": removing its state would lock it out until it is re-provisioned. Rotate "
                     "it (dsekp keys rotate), or pass --force");
}

void run_reset_state(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  edge::DeviceInfo info;
  check(registry->info(options.dev_id, info));  // a registered device only
  if (info.ratchet) check_ratchet_reset(info, options);
  remove_state(options, ": its next INIT starts a session from nothing");
}

void run_show(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  if (options.reveal) {
    check_header_possible(*registry, options);
    edge::DeviceMaterial material;
    check(registry->material(options.dev_id, material));
    print_material(material, options);
    return;
  }
  edge::DeviceInfo info;
  check(registry->info(options.dev_id, info));
  nlohmann::ordered_json out = info_json(info);
  if (info.ratchet) {
    // Where the device's secret is now: the edge's stored state (PROTOCOL.md 6.6).
    std::optional<std::uint32_t> epoch;
    std::string error;
    if (!edge::daemon::read_ratchet_epoch(state_location(options), options.dev_id, epoch, error))
      throw std::runtime_error("state of " + options.dev_id + ": " + error);
    out["ratchet_epoch"] = epoch ? nlohmann::ordered_json(*epoch) : nlohmann::ordered_json(nullptr);
  }
  std::cout << out.dump(2) << "\n";
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
  // Times in UTC, to the second (the JSON keeps milliseconds).
  std::printf("%-40s %10s  %-20s  %-20s  %s\n", "dev_id", "generation", "created (UTC)",
              "rotated (UTC)", "ratchet");
  for (const auto& d : devices) {
    const std::string created = utc_time(d.created_ms).substr(0, 19) + "Z";
    const std::string rotated = d.rotated_ms ? utc_time(*d.rotated_ms).substr(0, 19) + "Z" : "-";
    std::printf("%-40s %10llu  %-20s  %-20s  %s\n", d.dev_id.c_str(),
                static_cast<unsigned long long>(d.generation), created.c_str(), rotated.c_str(),
                d.ratchet ? "yes" : "no");
  }
}

/// The plugin admin's password: --admin-password-file (held to what a secret file must be), else
/// DSEKP_BROKER_ADMIN_PASSWORD. Never a command-line argument (every user can read those).
std::string admin_password(const KeysOptions& options) {
  std::string password;
  if (!options.admin_password_file.empty()) {
    check(edge::read_password_file(options.admin_password_file, password));
  } else if (const char* env = std::getenv("DSEKP_BROKER_ADMIN_PASSWORD")) {
    password = env;
  }
  if (password.empty())
    throw UsageError(
        "--dynamic-security: the plugin admin's password goes in --admin-password-file FILE or "
        "DSEKP_BROKER_ADMIN_PASSWORD");
  return password;
}

void print_summary(const edge::broker_admin::PlanSummary& s) {
  std::fprintf(stderr,
               "dsekp keys: dynamic-security plugin in line with the registry: clients %zu "
               "created, %zu changed, %zu deleted; roles %zu created, %zu changed, %zu deleted.\n",
               s.clients_created, s.clients_changed, s.clients_deleted, s.roles_created,
               s.roles_changed, s.roles_deleted);
}

void print_account_passwords(DeviceRegistry& registry) {
  std::vector<edge::ServiceAccount> accounts;
  check(registry.accounts(accounts));
  for (const auto& a : accounts)
    std::cout << "# " << edge::account_role_name(a.role) << " account " << a.login.username
              << " password: " << a.login.password << "\n";
}

// The broker's accounts, roles and ACLs live in its dynamic-security plugin, changed at once by
// every later `dsekp keys` command.
void run_dynamic_security_config(const KeysOptions& options, DeviceRegistry& registry) {
  const edge::BrokerAddress broker = broker_argument(options.dynamic_security);
  if (!edge::broker_admin::is_loopback_host(broker.host))
    throw UsageError("--dynamic-security: " + broker.host +
                     " is not a loopback address; passwords would cross the network in clear "
                     "(run dsekp keys on the broker's machine)");
  if (options.admin_user.empty())
    throw UsageError("--dynamic-security needs --admin-user (the plugin's admin client)");
  // Any local user may listen on a port >= 1024 while the broker is down, and would then be
  // sent the admin's login and the accounts' passwords.
  if (broker.port >= 1024 && !options.allow_unprivileged_port)
    throw UsageError("--dynamic-security: port " + std::to_string(broker.port) +
                     " can be taken by any local user while the broker is down, who would then "
                     "receive the admin password; give the broker a loopback listener on a port "
                     "below 1024 for dsekp (e.g. `listener 883 127.0.0.1`), or pass "
                     "--allow-unprivileged-port if every local user is trusted");
  edge::DynamicSecuritySettings settings;
  settings.host = broker.host;
  settings.port = broker.port;
  settings.admin = {options.admin_user, admin_password(options)};
  settings.topic_prefix = options.prefix;
  settings.psk_baseline = options.psk_baseline;
  settings.home_assistant = options.home_assistant;
  settings.republish_topic = options.republish_topic;
  edge::BrokerAccount edge_login;
  check(registry.set_edge_broker_user(options.edge_user, edge_login));
  check(edge::ensure_downlink_account(registry));
  if (edge::DynamicSecuritySettings before; registry.dynamic_security(before).ok() &&
                                            before.host == settings.host &&
                                            before.port == settings.port)
    settings.synced_generation = before.synced_generation;
  edge::broker_admin::PlanOptions plan;
  plan.set_every_password = options.reset_passwords;
  edge::broker_admin::PlanSummary summary;
  check(edge::broker_admin::sync_dynamic_security(registry, settings, plan, summary));
  // Recorded once the broker took it: later commands use a broker that is known to answer.
  settings.synced_generation = summary.synced_generation;
  check(registry.set_dynamic_security(settings));
  std::cout << edge::dynamic_security_conf_lines(options.home_assistant || options.retain);
  print_summary(summary);
  std::fprintf(stderr,
               "dsekp keys: from now on `dsekp keys add/rotate/remove/account` change the broker "
               "at once (no files, no reload). The edge logs in as %s with the password stored "
               "in the registry%s.\n",
               edge_login.username.c_str(),
               options.reveal ? "" : " (--reveal prints the accounts' passwords)");
  if (options.reveal) print_account_passwords(registry);
}

void run_rabbitmq_config(const KeysOptions& options, DeviceRegistry& registry) {
  edge::broker_admin::RabbitMqDefinitionsOptions rabbit;
  rabbit.edge_user = options.edge_user;
  rabbit.scope = {options.prefix, options.psk_baseline, edge::UplinkTopics::per_device,
                  options.home_assistant, options.republish_topic};
  rabbit.edge_queue = options.amqp_queue;
  edge::broker_admin::RabbitMqDefinitionsFile file;
  check(edge::broker_admin::write_rabbitmq_definitions(registry, options.rabbitmq_definitions,
                                                       rabbit, file));
  std::cout << file.conf_lines;
  std::fprintf(
      stderr,
      "dsekp keys: wrote %s (%zu devices + %zu other accounts). Load it with "
      "`rabbitmqctl import_definitions %s` (on any node: definitions are "
      "cluster-wide); an import never deletes, so then remove the accounts the "
      "registry no longer has: `rabbitmqctl -q list_users --formatter json | dsekp keys "
      "rabbitmq-stale-users --definitions %s | xargs -r -d '\\n' -n1 rabbitmqctl delete_user --`. "
      "The edge logs in as %s with the password stored in the registry%s.\n",
      file.path.c_str(), file.devices, file.accounts.size(), file.path.c_str(), file.path.c_str(),
      file.edge.username.c_str(),
      options.reveal ? "" : " (--reveal prints the accounts' passwords)");
  if (options.reveal) print_account_passwords(registry);
}

// Reads `rabbitmqctl list_users --formatter json` on stdin; prints the dsekp-tagged users the
// definitions file does not have, one per line.
void run_rabbitmq_stale_users(const KeysOptions& options) {
  std::ifstream file(options.rabbitmq_definitions);
  if (!file) throw UsageError("--definitions: cannot read " + options.rabbitmq_definitions);
  const auto definitions = nlohmann::ordered_json::parse(file, nullptr, false);
  if (definitions.is_discarded())
    throw UsageError("--definitions: " + options.rabbitmq_definitions + " is not JSON");
  const std::string listed((std::istreambuf_iterator<char>(std::cin)),
                           std::istreambuf_iterator<char>());
  std::vector<std::string> stale;
  check(edge::broker_admin::stale_rabbitmq_users(listed, definitions, stale));
  for (const std::string& user : stale) std::cout << user << "\n";
}

void run_broker_config(const KeysOptions& given) {
  if (const std::string why = edge::topic_prefix_problem(given.prefix); !why.empty())
    throw UsageError("--prefix: " + why);
  if (int{!given.out_dir.empty()} + int{!given.dynamic_security.empty()} +
          int{!given.rabbitmq_definitions.empty()} !=
      1)
    throw UsageError(
        "broker-config: give one of --out-dir (Mosquitto's password and ACL files), "
        "--dynamic-security HOST:PORT (Mosquitto's plugin) or --rabbitmq-definitions FILE");
  auto registry = open_registry(given.db, OpenMode::existing_only);
  // The deployment's prefix: --prefix records it (the devices' material, the edge and `edge
  // send` take it from the registry); without it, the recorded one.
  KeysOptions options = given;
  if (given.prefix.empty()) check(registry->topic_prefix(options.prefix));
  if (const std::string why = edge::republish_base_problem(options.prefix, options.republish_topic);
      !why.empty())
    throw UsageError("--republish-topic: " + why);
  const auto record_prefix = [&] {
    if (given.prefix.empty()) return;
    std::string recorded;
    check(registry->topic_prefix(recorded));
    if (recorded == given.prefix) return;
    check(registry->set_topic_prefix(given.prefix));
    std::fprintf(stderr,
                 "dsekp keys: the deployment's topic prefix is \"%s\" from now on (was \"%s\"): "
                 "re-provision the devices (keys show DEV --reveal) and restart the edge.\n",
                 given.prefix.c_str(), recorded.c_str());
  };
  if (!options.rabbitmq_definitions.empty()) {
    run_rabbitmq_config(options, *registry);
    record_prefix();  // after the file, as for Mosquitto's files
    return;
  }
  if (!options.dynamic_security.empty()) {
    // Before: the plugin's settings, saved first, carry the prefix and a failed sync is finished
    // by broker-sync under it.
    record_prefix();
    run_dynamic_security_config(options, *registry);
    return;
  }
  edge::BrokerConfigFiles files;
  edge::BrokerConfigOptions broker;
  broker.edge_user = options.edge_user;
  broker.topic_prefix = options.prefix;
  broker.psk_baseline = options.psk_baseline;
  broker.home_assistant = options.home_assistant;
  broker.republish_topic = options.republish_topic;
  broker.retain = options.retain;
  // The path goes into the printed mosquitto.conf lines: a line break would add one of its own.
  for (const char c : options.out_dir)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw UsageError("--out-dir: control characters are not allowed in the path");
  broker.broker_group = options.broker_group.value_or(default_broker_group());
  if (!broker.broker_group.empty() && ::getgrnam(broker.broker_group.c_str()) == nullptr)
    throw UsageError("--broker-group: no group \"" + broker.broker_group + "\" on this machine");
  check(edge::write_broker_config(*registry, options.out_dir, broker, files));
  record_prefix();  // after the files: a run that wrote none leaves the deployment as it was
  // The files are the broker's security from now on: later commands stop changing the plugin.
  if (edge::DynamicSecuritySettings was; registry->dynamic_security(was).ok()) {
    check(registry->clear_dynamic_security());
    std::fprintf(stderr,
                 "dsekp keys: the registry no longer changes the dynamic-security plugin at "
                 "%s:%u; the broker must read these files instead.\n",
                 was.host.c_str(), static_cast<unsigned>(was.port));
  }
  std::cout << files.conf_lines;
  std::fprintf(stderr,
               "dsekp keys: wrote %s (%zu devices + %zu other accounts) and %s. The edge logs in "
               "as %s with the password stored in the registry%s.\n",
               files.password_file.c_str(), files.devices, files.accounts.size(),
               files.acl_file.c_str(), files.edge.username.c_str(),
               options.reveal ? "" : " (--reveal prints the accounts' passwords)");
  if (options.reveal) print_account_passwords(*registry);
}

void run_broker_sync(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  edge::DynamicSecuritySettings settings;
  check(registry->dynamic_security(settings));
  edge::broker_admin::PlanOptions plan;
  plan.set_every_password = options.reset_passwords;
  edge::broker_admin::PlanSummary summary;
  check(edge::broker_admin::sync_dynamic_security(*registry, settings, plan, summary));
  check(registry->set_dynamic_security_synced(summary.synced_generation));
  print_summary(summary);
}

void run_account_add(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  edge::AccountRole role = edge::AccountRole::edge;
  if (!edge::parse_account_role(options.role, role))
    throw UsageError("--role: edge, reader or downlink");
  check_broker_name_free(*registry, options.dev_id);
  edge::ServiceAccount account;
  check(registry->add_account(options.dev_id, role, account));
  std::cout << nlohmann::ordered_json{{"username", account.login.username},
                                      {"role", edge::account_role_name(account.role)},
                                      {"password", account.login.password}}
                   .dump(2)
            << "\n";
  if (role == edge::AccountRole::reader)
    std::fprintf(stderr, "dsekp keys: %s reads every reading the edges republish IN CLEAR.\n",
                 account.login.username.c_str());
  apply_to_broker(*registry, std::string(edge::account_role_name(account.role)) + " account " +
                                 account.login.username);
}

void run_account_remove(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  check(registry->remove_account(options.dev_id));
  apply_to_broker(*registry, "removed account " + options.dev_id);
}

// Reads one account without rewriting the broker files (which broker-config --reveal does).
void run_account_show(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  edge::ServiceAccount account;
  check(registry->account(options.dev_id, account));
  nlohmann::ordered_json out{{"username", account.login.username},
                             {"role", edge::account_role_name(account.role)}};
  if (options.reveal) out["password"] = account.login.password;
  std::cout << out.dump(2) << "\n";
}

void run_account_list(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  std::vector<edge::ServiceAccount> accounts;
  check(registry->accounts(accounts));
  auto out = nlohmann::ordered_json::array();
  for (const auto& a : accounts)
    out.push_back({{"username", a.login.username}, {"role", edge::account_role_name(a.role)}});
  std::cout << out.dump(2) << "\n";
}

void run_topic_prefix(const KeysOptions& options, bool set) {
  // Setting it may come first, before any device: their material then has it from the start.
  auto registry =
      open_registry(options.db, set ? OpenMode::create_if_missing : OpenMode::existing_only);
  if (set) {
    if (const std::string why = edge::topic_prefix_problem(options.prefix); !why.empty())
      throw UsageError("PREFIX: " + why);
    check(registry->set_topic_prefix(options.prefix));
    std::fprintf(stderr,
                 "dsekp keys: every DSEKP topic starts with \"%s\" from now on. Re-provision the "
                 "devices (keys show DEV --reveal), rerun `dsekp keys broker-config` and restart "
                 "the edge.\n",
                 options.prefix.c_str());
    if (options.prefix.size() > edge::kFirmwareTopicPrefixMax)
      std::fprintf(stderr,
                   "dsekp keys: warning: longer than the %zu characters the device SDK holds: "
                   "--format header (firmware) will be refused; JSON material still works.\n",
                   edge::kFirmwareTopicPrefixMax);
  }
  std::string prefix;
  check(registry->topic_prefix(prefix));
  std::cout << prefix << "\n";
}

// For a fleet tool that sends downlink requests itself (docs/EDGE.md, "Sending to a device"):
// the key they are signed with. Secret: whoever holds it can make the edge seal downlinks.
void run_admin_key(const KeysOptions& options) {
  if (!options.reveal)
    throw UsageError("admin-key prints a secret: give --reveal (and keep it out of logs)");
  auto registry = open_registry(options.db, OpenMode::existing_only);
  std::array<std::uint8_t, 32> key{};
  check(registry->admin_key(key));
  std::cout << edge::to_hex(ByteView(key.data(), key.size())) << "\n";
  secure_wipe(MutableByteView(key.data(), key.size()));
}

void run_uplink_topics(const KeysOptions& options) {
  auto registry = open_registry(options.db, OpenMode::existing_only);
  edge::UplinkTopics topics = edge::UplinkTopics::per_device;
  if (!options.uplink_topics.empty()) {
    topics = *edge::parse_uplink_topics(options.uplink_topics);  // CLI11 checked the word
    check(registry->set_uplink_topics(topics));
    std::fprintf(stderr,
                 "dsekp keys: devices publish on %s uplink topics from now on. Re-provision the "
                 "devices (keys show DEV --reveal), rerun `dsekp keys broker-config` and reload "
                 "the broker.\n",
                 edge::uplink_topics_name(topics));
  }
  check(registry->uplink_topics(topics));
  std::cout << edge::uplink_topics_name(topics) << "\n";
}

void add_db_option(CLI::App* command, KeysOptions& options) {
  command->add_option("--db", options.db, "Registry database (SQLite, mode 0600)")->required();
}

void add_dev_id(CLI::App* command, KeysOptions& options) {
  command->add_option("DEV_ID", options.dev_id, "Device id: 1-64 of [A-Za-z0-9._-]")->required();
}

void add_state_options(CLI::App* command, KeysOptions& options) {
  command->add_option("--state-db", options.state.state_db,
                      "The edge's state database (default: <db>.state)");
  command->add_option("--store", options.state.store,
                      "The edge's session store, as given to `dsekp edge --store` "
                      "(redis://[USER@]HOST[:PORT][/PREFIX] or redis+cluster://HOST[:PORT],..., "
                      "the password in DSEKP_REDIS_PASSWORD; "
                      "default: the state database)");
}

void add_material_options(CLI::App* command, KeysOptions& options) {
  command->add_option("--broker", options.broker,
                      "Broker the device connects to, HOST:PORT (recorded with the device; "
                      "default: the recorded one, else localhost:1883)");
  command->add_option("--format", options.format, "Material as JSON or a C header for firmware")
      ->check(CLI::IsMember({"json", "header"}))
      ->capture_default_str();
  command->add_flag("--psk-baseline", options.psk_baseline,
                    "Include the static PSK key of the paper's baseline (for the comparison "
                    "experiment only)");
  command->add_option("--out", options.out_file,
                      "Write the material to FILE (mode 0600) instead of standard output");
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
  add->add_flag("--ratchet", o->ratchet,
                "The device ratchets its secret after every session (forward secrecy, PROTOCOL.md "
                "6.6); its firmware must store each new secret");
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
  add_state_options(show, *o);
  show->callback([o] { run_show(*o); });

  CLI::App* remove = keys->add_subcommand(
      "remove", "Remove a device and wipe its keys, also its session state in the edge's store");
  add_dev_id(remove, *o);
  add_db_option(remove, *o);
  add_state_options(remove, *o);
  remove->callback([o] { run_remove(*o); });

  CLI::App* reset = keys->add_subcommand(
      "reset-state",
      "Remove a device's stored session state (a device quarantined as corrupt_state): it "
      "must handshake again");
  add_dev_id(reset, *o);
  add_db_option(reset, *o);
  add_state_options(reset, *o);
  reset->add_flag("--force", o->force,
                  "Also reset a ratcheting device too far past its provisioning for the edge to "
                  "find its secret again (it is then locked out until rotated)");
  reset
      ->add_option("--ratchet-lookahead", o->ratchet_lookahead,
                   "The edge's --ratchet-lookahead: how far past its provisioning a ratcheting "
                   "device may be for the edge to find it again after the reset")
      ->check(CLI::Range(1u, dsekp::kMaxRatchetLookahead))
      ->capture_default_str();
  reset->callback([o] { run_reset_state(*o); });

  CLI::App* rotate = keys->add_subcommand(
      "rotate", "Replace a device's DEV_SECRET, PSK key and broker password; print the material");
  add_dev_id(rotate, *o);
  add_db_option(rotate, *o);
  add_material_options(rotate, *o);
  rotate
      ->add_option("--ratchet", o->ratchet_mode,
                   "on or off: change whether the device ratchets its secret (default: keep)")
      ->check(CLI::IsMember({"on", "off"}));
  rotate->callback([o] { run_rotate(*o); });

  CLI::App* broker = keys->add_subcommand(
      "broker-config",
      "Write the broker's accounts and permissions (Mosquitto's password and ACL files or its "
      "dynamic-security plugin, or RabbitMQ definitions); print the broker configuration lines");
  add_db_option(broker, *o);
  broker->add_option("--out-dir", o->out_dir,
                     "Directory for the passwd and acl files (a broker without the "
                     "dynamic-security plugin)");
  broker->add_option("--dynamic-security", o->dynamic_security,
                     "HOST:PORT of a broker with Mosquitto's dynamic-security plugin on this "
                     "machine: its clients and roles follow every later `dsekp keys` change at "
                     "once");
  broker->add_option("--admin-user", o->admin_user,
                     "The plugin's admin client (`mosquitto_ctrl dynsec init`); its password in "
                     "--admin-password-file or DSEKP_BROKER_ADMIN_PASSWORD");
  broker->add_option("--admin-password-file", o->admin_password_file,
                     "File holding the plugin admin's password (mode 0600 or 0640)");
  broker->add_flag("--allow-unprivileged-port", o->allow_unprivileged_port,
                   "Let --dynamic-security use a port >= 1024, which any local user can take "
                   "while the broker is down (and so receive the admin password)");
  broker->add_flag("--reset-passwords", o->reset_passwords,
                   "Set every DSEKP client's password on the plugin again (after a broker "
                   "restored from an old copy; it disconnects them all once)");
  broker->add_option("--rabbitmq-definitions", o->rabbitmq_definitions,
                     "Write RabbitMQ definitions (users, permissions, topic permissions; mode "
                     "0600) to this file for `rabbitmqctl import_definitions`: the clustered "
                     "broker tier (`dsekp edge --amqp`)");
  broker->add_option("--amqp-queue", o->amqp_queue,
                     "With --rabbitmq-definitions: the quorum queue the edges consume "
                     "(`dsekp edge --amqp-queue`, default dsekp-uplink)");
  broker->add_option("--edge-user", o->edge_user, "The edge's broker user name")->required();
  broker->add_option("--prefix", o->prefix,
                     "Topic prefix of the deployment, e.g. site1/ (recorded in the registry; "
                     "default: the recorded one)");
  broker->add_flag("--psk-baseline", o->psk_baseline,
                   "Let devices publish and edges read psk/data (the comparison experiment)");
  broker->add_option("--broker-group", o->broker_group,
                     "Group the broker reads passwd through: passwd 0640 and a new --out-dir "
                     "0750 in it (default: mosquitto, when that group exists and this user may "
                     "give files to it; \"\": none, files private to you). Accounts of your own go "
                     "in passwd.local and "
                     "acl.local in --out-dir, appended and never written");
  broker->add_flag("--reveal", o->reveal, "Also print the passwords of the non-device accounts");
  broker->add_flag("--home-assistant", o->home_assistant,
                   "For `dsekp edge --home-assistant`: edges may write Home Assistant discovery "
                   "configs, readers read them, and the broker keeps retained messages");
  broker->add_flag("--retain", o->retain,
                   "For `dsekp edge --republish-retain`: the broker keeps retained messages (the "
                   "edge still refuses retained uplink frames)");
  broker->add_option("--republish-topic", o->republish_topic,
                     "The base topic `dsekp edge --republish-topic` republishes under (default: "
                     "{prefix}plain): edges write and readers read BASE/#");
  broker->callback([o] { run_broker_config(*o); });

  CLI::App* stale = keys->add_subcommand(
      "rabbitmq-stale-users",
      "Read `rabbitmqctl list_users --formatter json` on stdin and print the DSEKP users "
      "(tagged dsekp-*) that a definitions file no longer has, for `rabbitmqctl delete_user`");
  stale
      ->add_option("--definitions", o->rabbitmq_definitions,
                   "The file `keys broker-config --rabbitmq-definitions` wrote")
      ->required();
  stale->callback([o] { run_rabbitmq_stale_users(*o); });

  CLI::App* sync = keys->add_subcommand(
      "broker-sync",
      "Bring the dynamic-security plugin in line with the registry again (after a command that "
      "could not reach the broker)");
  add_db_option(sync, *o);
  sync->add_flag("--reset-passwords", o->reset_passwords,
                 "Also set every DSEKP client's password again (disconnects them once)");
  sync->callback([o] { run_broker_sync(*o); });

  CLI::App* import_command = keys->add_subcommand(
      "import",
      "Register devices provisioned elsewhere with the secrets they hold: a JSON array of "
      "material (keys export, keys show --reveal) or a CSV with dev_id, dev_secret_hex and "
      "optionally edge_salt_hex, psk_key_hex, broker_password, broker; all or none");
  import_command->add_option("FILE", o->import_file, "The file (.csv: CSV, else JSON)")->required();
  add_db_option(import_command, *o);
  import_command
      ->add_option("--format", o->import_format, "json or csv (default: by the file's extension)")
      ->check(CLI::IsMember({"json", "csv"}));
  import_command->add_option("--broker", o->broker,
                             "Record this HOST:PORT as every imported device's broker");
  import_command->callback([o] { run_import(*o); });

  CLI::App* export_command = keys->add_subcommand(
      "export", "Write every device's provisioning material (secret) to a 0600 JSON file");
  add_db_option(export_command, *o);
  export_command->add_option("--out", o->out_file, "The file (mode 0600)")->required();
  export_command->add_flag("--psk-baseline", o->psk_baseline, "Include the PSK baseline's keys");
  export_command->add_option("--broker", o->broker,
                             "Broker in the material (default: each device's recorded one)");
  export_command->callback([o] { run_export(*o); });

  CLI::App* topics = keys->add_subcommand(
      "uplink-topics",
      "Show or set the topics devices publish on: per-device (dsekp/init/DEV, dsekp/data/DEV; "
      "the broker lets each device publish only under its own name) or shared (the paper's "
      "dsekp/init, dsekp/data)");
  add_db_option(topics, *o);
  topics->add_option("TOPICS", o->uplink_topics, "per-device or shared")
      ->check(CLI::IsMember({"per-device", "shared"}));
  topics->callback([o] { run_uplink_topics(*o); });

  CLI::App* prefix = keys->add_subcommand(
      "topic-prefix",
      "Show or set the deployment's topic prefix (e.g. site1/), in front of every DSEKP topic: "
      "the devices' material, the broker grants and the edge take it from the registry");
  add_db_option(prefix, *o);
  prefix->add_option("PREFIX", o->prefix, "The new prefix (\"\" for none)");
  prefix->callback([o, prefix] { run_topic_prefix(*o, prefix->count("PREFIX") > 0); });

  CLI::App* admin_key = keys->add_subcommand(
      "admin-key",
      "Print the key that signs downlink requests (secret: for a fleet tool that sends them "
      "itself; dsekp edge send needs only --db)");
  add_db_option(admin_key, *o);
  admin_key->add_flag("--reveal", o->reveal, "Yes, print the secret");
  admin_key->callback([o] { run_admin_key(*o); });

  CLI::App* account = keys->add_subcommand(
      "account", "Broker accounts that are not devices: more edges, readers, downlink senders");
  account->require_subcommand(1);
  CLI::App* account_add =
      account->add_subcommand("add", "Add an account with a fresh password and print it (secret)");
  account_add->add_option("NAME", o->dev_id, "User name: 1-64 of [A-Za-z0-9._-]")->required();
  add_db_option(account_add, *o);
  account_add
      ->add_option("--role", o->role,
                   "edge (one per edge daemon), reader (reads republished readings IN CLEAR) "
                   "or downlink (dsekp edge send)")
      ->check(CLI::IsMember({"edge", "reader", "downlink"}))
      ->required();
  account_add->callback([o] { run_account_add(*o); });
  CLI::App* account_remove = account->add_subcommand("remove", "Remove an account");
  account_remove->add_option("NAME", o->dev_id, "User name")->required();
  add_db_option(account_remove, *o);
  account_remove->callback([o] { run_account_remove(*o); });
  CLI::App* account_show =
      account->add_subcommand("show", "Show one account (its password only with --reveal)");
  account_show->add_option("NAME", o->dev_id, "User name")->required();
  add_db_option(account_show, *o);
  account_show->add_flag("--reveal", o->reveal, "Also print the account's broker password");
  account_show->callback([o] { run_account_show(*o); });
  CLI::App* account_list = account->add_subcommand("list", "List the accounts (no passwords)");
  add_db_option(account_list, *o);
  account_list->callback([o] { run_account_list(*o); });

  add_keys_serve_command(*keys);
}

}  // namespace dsekp::cli
