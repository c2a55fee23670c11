// Mosquitto password + ACL files from the registry (see broker_config.hpp).
#include "broker_config.hpp"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

#include "broker_grants.hpp"
#include "broker_local_files.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/mqtt/mqtt_limits.hpp"
#include "mosquitto_password.hpp"
#include "republish_topics.hpp"
#include "secure_file.hpp"

namespace dsekp::edge {

namespace {

std::string user_block(const std::string& user, const std::vector<TopicGrant>& grants) {
  std::string out = "user " + user + "\n";
  for (const TopicGrant& g : grants)
    out += std::string("topic ") + (g.access == TopicAccess::read ? "read " : "write ") + g.filter +
           "\n";
  return out;
}

std::string account_blocks(const std::vector<ServiceAccount>& accounts, AccountRole role,
                           const GrantScope& scope) {
  std::string out;
  for (const ServiceAccount& a : accounts)
    if (a.role == role) out += user_block(a.login.username, account_grants(role, scope));
  return out;
}

// Why giving a file to the broker's group failed, when that is the likely reason.
std::string group_hint(int err) {
  return err == EPERM ? " (giving files to a group needs root or membership of it; an empty "
                        "broker group keeps them private to you)"
                      : "";
}

// The broker group's id, or kKeepGroup when there is none.
RegistryStatus broker_gid(const std::string& group, gid_t& out) {
  out = kKeepGroup;
  if (group.empty()) return {};
  const struct group* g = ::getgrnam(group.c_str());
  if (g == nullptr)
    return {RegistryErrc::invalid_argument,
            "no group \"" + group +
                "\" on this machine (the broker's own group; none: pass an "
                "empty broker group)"};
  out = g->gr_gid;
  return {};
}

}  // namespace

std::string broker_acl_text(const std::vector<ServiceAccount>& accounts,
                            const std::vector<std::string>& device_users,
                            const BrokerConfigOptions& options, std::string_view local_acl) {
  const GrantScope scope{options.topic_prefix, options.psk_baseline, options.uplink_topics,
                         options.home_assistant, options.republish_topic};
  std::string devices;
  // One block per device, its own topics spelled out: no grant reaches an account that is not
  // a device (a Mosquitto pattern applies to every account, and one without %u or %c draws a
  // warning on every load).
  for (const std::string& d : device_users) devices += user_block(d, device_grants(d, scope));
  const std::string local = local_acl.empty()
                                ? ""
                                : "\n# The operator's own accounts (" + std::string(kLocalAclFile) +
                                      ", never written by dsekp).\n" + std::string(local_acl);
  return "# DSEKP broker ACL, written by `dsekp keys broker-config`: regenerate, do not edit.\n"
         "# Client ids are the user names (use_username_as_clientid): no account can take over\n"
         "# another's session. No pattern lines: every grant names its account.\n"
         "\n"
         "# Edges read all device traffic, answer on every device's topics, republish readings\n"
         "# (only with `dsekp edge --republish`) and take downlink requests.\n" +
         account_blocks(accounts, AccountRole::edge, scope) +
         "\n"
         "# Readers of the readings edges republish IN CLEAR: these accounts only.\n" +
         account_blocks(accounts, AccountRole::reader, scope) +
         "\n"
         "# Downlink senders (`dsekp edge send`).\n" +
         account_blocks(accounts, AccountRole::downlink, scope) +
         "\n"
         "# Devices (user name = dev_id) publish uplink frames and read only their own ACK,\n"
         "# downlink and REKEY topics.\n" +
         devices + local;
}

RegistryStatus broker_password_file_text(const std::vector<BrokerAccount>& accounts, Rng& rng,
                                         std::string& out) {
  out.clear();
  for (const BrokerAccount& account : accounts) {
    std::string line;
    if (auto s = mosquitto_password_line(account.username, account.password, rng, line); !s.ok())
      return s;
    out += line;
  }
  return {};
}

RegistryStatus ensure_downlink_account(DeviceRegistry& registry) {
  std::vector<ServiceAccount> accounts;
  if (auto s = registry.accounts(accounts); !s.ok()) return s;
  for (const ServiceAccount& a : accounts)
    if (a.role == AccountRole::downlink) return {};
  ServiceAccount added;
  return registry.add_account(kDefaultDownlinkUser, AccountRole::downlink, added);
}

namespace {

// What every DSEKP listener needs, whichever way the broker keeps its accounts.
std::string listener_lines(bool retained_messages) {
  return std::string(
             "per_listener_settings false\n"
             "allow_anonymous false\n"
             "# Every client id is replaced by the user name: no account can take over\n"
             "# another's session (the edge's, a device's).\n"
             "use_username_as_clientid true\n") +
         (retained_messages
              ? std::string(
                    "# Retained messages for Home Assistant (discovery configs, last states). A\n"
                    "# frame a device publishes retained is refused by the edge\n"
                    "# (retained_message) on every subscription.\n"
                    "retain_available true\n")
              : std::string(
                    "# No retained messages: a device could otherwise have the broker keep a\n"
                    "# frame and hand it to the edge on every subscription.\n"
                    "retain_available false\n")) +
         "# No DSEKP packet comes near this (edge/mqtt/mqtt_limits.hpp); a larger one from any\n"
         "# client is refused by the broker before it is stored or forwarded.\n"
         "max_packet_size " +
         std::to_string(mqtt::kMaxMqttPacketSize) + "\n";
}

}  // namespace

std::string broker_conf_lines(const std::string& password_file, const std::string& acl_file,
                              bool retained_messages) {
  return "# DSEKP broker security (dsekp keys broker-config). Put these lines AFTER the\n"
         "# `listener` line of the port devices use (use_username_as_clientid is the listener's\n"
         "# own: repeat it after every other listener line). The broker reads both files as\n"
         "# its own user: broker-config gives them to the broker's group (see its --help).\n" +
         listener_lines(retained_messages) + "password_file " + password_file + "\nacl_file " +
         acl_file + "\n";
}

std::string dynamic_security_conf_lines(bool retained_messages) {
  std::string plugin = "/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so";
  for (const char* candidate : {"/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so",
                                "/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so",
                                "/usr/lib/arm-linux-gnueabihf/mosquitto_dynamic_security.so"})
    if (::access(candidate, R_OK) == 0) plugin = candidate;
  return "# DSEKP broker security on the dynamic-security plugin (dsekp keys broker-config\n"
         "# --dynamic-security). Put these lines AFTER the `listener` line of the port devices\n"
         "# use (use_username_as_clientid is the listener's own: repeat it after every other\n"
         "# listener line). The plugin's file is created by\n"
         "#   mosquitto_ctrl dynsec init /var/lib/mosquitto/dynamic-security.json ADMIN\n"
         "# and must be writable by the broker's user; the plugin keeps every account in it.\n" +
         listener_lines(retained_messages) + "plugin " + plugin +
         "\nplugin_opt_config_file /var/lib/mosquitto/dynamic-security.json\n";
}

namespace {

// The directory the files go into: created 0750 in the broker's group (0700 without one); an
// existing one is given the group and g+rx when this user owns it, since a directory the broker
// cannot enter makes the files' own modes moot.
RegistryStatus prepare_directory(const std::string& out_dir, gid_t group,
                                 std::filesystem::path& dir) {
  const bool shared = group != kKeepGroup;
  std::error_code ec;
  const bool created = std::filesystem::create_directories(out_dir, ec);
  if (ec) return {RegistryErrc::io, "cannot create " + out_dir + ": " + ec.message()};
  dir = std::filesystem::absolute(out_dir, ec);
  if (ec) return {RegistryErrc::io, "cannot resolve " + out_dir + ": " + ec.message()};
  struct stat st {};
  if (::stat(out_dir.c_str(), &st) != 0) {
    const int err = errno;
    return {RegistryErrc::io, "cannot stat " + out_dir + ": " + std::strerror(err)};
  }
  // Anyone else who can write here could replace the files the broker trusts.
  if (!created && st.st_uid != 0 && st.st_uid != ::geteuid())
    return {RegistryErrc::insecure_file,
            out_dir + " belongs to another user than root or the one running dsekp"};
  if (!created && (st.st_mode & 0022) != 0)
    return {RegistryErrc::insecure_file,
            out_dir + " is writable by group or others; run: chmod go-w " + out_dir};
  mode_t mode = st.st_mode & 07777;
  if (created) mode = shared ? 0750 : 0700;
  if (shared) mode |= 0050;
  if (!created && !shared) return {};
  if (shared && st.st_gid != group &&
      ::chown(out_dir.c_str(), static_cast<uid_t>(-1), group) != 0) {
    const int err = errno;
    return {RegistryErrc::io, "cannot give " + out_dir + " to the broker's group: " +
                                  std::strerror(err) + group_hint(err)};
  }
  if (mode != (st.st_mode & 07777) && ::chmod(out_dir.c_str(), mode) != 0) {
    const int err = errno;
    return {RegistryErrc::io, "cannot chmod " + out_dir + ": " + std::strerror(err)};
  }
  return {};
}

}  // namespace

RegistryStatus write_broker_config(DeviceRegistry& registry, const std::string& out_dir,
                                   const BrokerConfigOptions& options, BrokerConfigFiles& out) {
  // Everything is checked before the registry or any file changes.
  if (const std::string why = topic_prefix_problem(options.topic_prefix); !why.empty())
    return {RegistryErrc::invalid_argument, why};
  if (const std::string why = republish_base_problem(options.topic_prefix, options.republish_topic);
      !why.empty())
    return {RegistryErrc::invalid_argument, why};
  gid_t group = kKeepGroup;
  if (auto s = broker_gid(options.broker_group, group); !s.ok()) return s;
  BrokerConfigOptions effective = options;
  if (auto s = registry.uplink_topics(effective.uplink_topics); !s.ok()) return s;
  std::vector<ServiceAccount> accounts;
  if (auto s = registry.accounts(accounts); !s.ok()) return s;
  std::vector<BrokerAccount> device_logins;
  if (auto s = registry.device_broker_accounts(device_logins); !s.ok()) return s;
  const bool has_downlink =
      std::any_of(accounts.begin(), accounts.end(),
                  [](const ServiceAccount& a) { return a.role == AccountRole::downlink; });

  std::filesystem::path dir;
  if (auto s = prepare_directory(out_dir, group, dir); !s.ok()) return s;
  LocalBrokerFiles local;
  if (auto s = read_local_broker_files(dir, local); !s.ok()) return s;
  std::set<std::string> registry_users{options.edge_user};
  if (!has_downlink) registry_users.insert(std::string(kDefaultDownlinkUser));
  for (const BrokerAccount& d : device_logins) registry_users.insert(d.username);
  for (const ServiceAccount& a : accounts) registry_users.insert(a.login.username);
  for (const std::string& user : local.passwd_users)
    if (registry_users.count(user) != 0)
      return {RegistryErrc::name_conflict,
              std::string(kLocalPasswordFile) + " has an account \"" + user +
                  "\", which is also a registry account: rename or remove one of them"};

  if (auto s = registry.set_edge_broker_user(options.edge_user, out.edge); !s.ok()) return s;
  if (auto s = ensure_downlink_account(registry); !s.ok()) return s;
  if (auto s = registry.accounts(out.accounts); !s.ok()) return s;
  std::vector<BrokerAccount> logins = device_logins;
  out.devices = logins.size();
  std::vector<std::string> device_users;
  for (const BrokerAccount& d : device_logins) device_users.push_back(d.username);
  for (const ServiceAccount& a : out.accounts) logins.push_back(a.login);
  out.password_file = (dir / "passwd").string();
  out.acl_file = (dir / "acl").string();

  OpenSslRng rng;
  std::string passwd;
  if (auto s = broker_password_file_text(logins, rng, passwd); !s.ok()) return s;
  passwd += local.passwd;
  // The ACL first: a new ACL beside the old passwd grants nothing to a login that does not
  // exist yet, while a new passwd beside the old ACL could let a new account in ungoverned.
  if (auto s = write_file_atomically(
          out.acl_file, broker_acl_text(out.accounts, device_users, effective, local.acl), 0644,
          group);
      !s.ok())
    return s;
  if (auto s = write_file_atomically(out.password_file, passwd, group != kKeepGroup ? 0640 : 0600,
                                     group);
      !s.ok())
    return s;
  out.conf_lines =
      broker_conf_lines(out.password_file, out.acl_file, options.home_assistant || options.retain);
  return {};
}

}  // namespace dsekp::edge
