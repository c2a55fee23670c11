// Mosquitto password + ACL files from the registry (see broker_config.hpp).
#include "broker_config.hpp"

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/mqtt/mqtt_limits.hpp"
#include "mosquitto_password.hpp"
#include "secure_file.hpp"

namespace dsekp::edge {

namespace {

std::string lines_for(const std::vector<ServiceAccount>& accounts, AccountRole role,
                      const std::string& grants) {
  std::string out;
  for (const ServiceAccount& a : accounts)
    if (a.role == role) out += "user " + a.login.username + "\n" + grants;
  return out;
}

// Grants every device account has that name no device: one block per device, since a Mosquitto
// pattern without %u or %c draws a warning on every load.
std::string per_device_user_lines(const std::vector<std::string>& device_users,
                                  const std::string& grants) {
  if (grants.empty()) return {};
  std::string out;
  for (const std::string& user : device_users) out += "user " + user + "\n" + grants;
  return out;
}

// The operator's file `name` in `dir`: "" if there is none. Capped so that a stray large file
// cannot make broker-config build an unbounded password file.
constexpr std::uintmax_t kMaxLocalFileBytes = 1 << 20;

RegistryStatus read_local_file(const std::filesystem::path& dir, std::string_view name,
                               bool holds_hashes, std::string& out) {
  out.clear();
  const std::string path = (dir / name).string();
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return {RegistryErrc::io, "cannot stat " + path + ": " + std::strerror(errno)};
  }
  if (!S_ISREG(st.st_mode)) return {RegistryErrc::io, path + " is not a regular file"};
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxLocalFileBytes)
    return {RegistryErrc::io, path + " is larger than 1 MiB"};
  // Password hashes can be attacked offline: the generated passwd is never open to others, so
  // neither may the file whose lines go into it.
  if (holds_hashes && (st.st_mode & 0007) != 0)
    return {RegistryErrc::insecure_file,
            path + " holds password hashes but is open to others; run: chmod o-rwx " + path};
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return {RegistryErrc::io, "cannot read " + path};
  out = text.str();
  if (!out.empty() && out.back() != '\n') out += '\n';
  return {};
}

// passwd.local's user names (the part before ':' of each line that is not blank or a comment).
RegistryStatus local_password_users(std::string_view text, const std::string& path,
                                    std::vector<std::string>& users) {
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty() || line.front() == '#') continue;
    const auto colon = line.find(':');
    if (colon == 0 || colon == std::string::npos)
      return {RegistryErrc::invalid_argument,
              path + " line " + std::to_string(number) +
                  ": not a \"user:hash\" line (make them with mosquitto_passwd)"};
    users.push_back(line.substr(0, colon));
  }
  return {};
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

std::string topic_prefix_problem(std::string_view prefix) {
  for (const char c : prefix) {
    if (c <= ' ' || c > '~') return "the topic prefix may hold only printable ASCII, no spaces";
    if (c == '+' || c == '#') return "the topic prefix may not hold the wildcards + or #";
    // '%' would be expanded in the devices' pattern lines (%u, %c).
    if (c == '%') return "the topic prefix may not hold '%'";
  }
  if (!prefix.empty() && prefix.front() == '$')
    return "the topic prefix may not start with '$' (the broker's own topics)";
  if (prefix.size() > 128) return "the topic prefix is longer than 128 characters";
  return {};
}

std::string broker_acl_text(const std::vector<ServiceAccount>& accounts,
                            const std::vector<std::string>& device_users,
                            const BrokerConfigOptions& options, std::string_view local_acl) {
  const std::string& p = options.topic_prefix;
  const std::string psk_read = options.psk_baseline ? "topic read " + p + "psk/data\n" : "";
  const std::string psk_write = options.psk_baseline ? "topic write " + p + "psk/data\n" : "";
  // Per-device topics bind what a device account may publish to its own dev_id (the edge checks
  // the frame's dev_id against the topic's); shared ones let it publish frames naming any device.
  const bool per_device = options.uplink_topics == UplinkTopics::per_device;
  const std::string uplink_patterns = per_device ? "pattern write " + p + "dsekp/init/%u\n" +
                                                       "pattern write " + p + "dsekp/data/%u\n"
                                                 : "";
  const std::string shared_writes =
      (per_device ? ""
                  : "topic write " + p + "dsekp/init\n" + "topic write " + p + "dsekp/data\n") +
      psk_write;
  const std::string local = local_acl.empty()
                                ? ""
                                : "\n# The operator's own accounts (" + std::string(kLocalAclFile) +
                                      ", never written by dsekp).\n" + std::string(local_acl);
  return "# DSEKP broker ACL, written by `dsekp keys broker-config`: regenerate, do not edit.\n"
         "# Client ids are the user names (use_username_as_clientid): no account can take over\n"
         "# another's session.\n"
         "\n"
         "# Edges read all device traffic, answer on every device's topics, republish readings\n"
         "# (only with `dsekp edge --republish`) and take downlink requests.\n" +
         lines_for(accounts, AccountRole::edge,
                   "topic read " + p + "dsekp/init\n" + "topic read " + p + "dsekp/data\n" +
                       "topic read " + p + "dsekp/init/+\n" + "topic read " + p + "dsekp/data/+\n" +
                       psk_read + "topic write " + p + "dsekp/init/ack/+\n" + "topic write " + p +
                       "dsekp/down/+\n" + "topic write " + p + "dsekp/rekey/+\n" + "topic write " +
                       p + "plain/+\n" + "topic read " + p + "dsekp/admin/downlink\n" +
                       "topic write " + p + "dsekp/admin/result/+\n") +
         "\n"
         "# Readers of the readings edges republish IN CLEAR: these accounts only.\n" +
         lines_for(accounts, AccountRole::reader, "topic read " + p + "plain/+\n") +
         "\n"
         "# Downlink senders (`dsekp edge send`).\n" +
         lines_for(accounts, AccountRole::downlink,
                   "topic write " + p + "dsekp/admin/downlink\n" + "topic read " + p +
                       "dsekp/admin/result/+\n") +
         "\n"
         "# Devices (user name = dev_id) publish uplink frames and read only their own ACK,\n"
         "# downlink and REKEY topics.\n" +
         per_device_user_lines(device_users, shared_writes) + uplink_patterns + "pattern read " +
         p + "dsekp/init/ack/%u\n" + "pattern read " + p + "dsekp/down/%u\n" + "pattern read " + p +
         "dsekp/rekey/%u\n" + local;
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

std::string broker_conf_lines(const std::string& password_file, const std::string& acl_file) {
  return "# DSEKP broker security (dsekp keys broker-config). Put these lines AFTER the\n"
         "# `listener` line of the port devices use (use_username_as_clientid is the listener's\n"
         "# own: repeat it after every other listener line). The broker reads both files as\n"
         "# its own user: broker-config gives them to the broker's group (see its --help).\n"
         "per_listener_settings false\n"
         "allow_anonymous false\n"
         "# Every client id is replaced by the user name: no account can take over another's\n"
         "# session (the edge's, a device's).\n"
         "use_username_as_clientid true\n"
         "# No retained messages: a device could otherwise have the broker keep a frame and\n"
         "# hand it to the edge on every subscription.\n"
         "retain_available false\n"
         "# No DSEKP packet comes near this (edge/mqtt/mqtt_limits.hpp); a larger one from any\n"
         "# client is refused by the broker before it is stored or forwarded.\n"
         "max_packet_size " +
         std::to_string(mqtt::kMaxMqttPacketSize) +
         "\n"
         "password_file " +
         password_file + "\nacl_file " + acl_file + "\n";
}

RegistryStatus write_broker_config(DeviceRegistry& registry, const std::string& out_dir,
                                   const BrokerConfigOptions& options, BrokerConfigFiles& out) {
  if (const std::string why = topic_prefix_problem(options.topic_prefix); !why.empty())
    return {RegistryErrc::invalid_argument, why};
  if (auto s = registry.set_edge_broker_user(options.edge_user, out.edge); !s.ok()) return s;
  BrokerConfigOptions effective = options;
  if (auto s = registry.uplink_topics(effective.uplink_topics); !s.ok()) return s;
  if (auto s = registry.accounts(out.accounts); !s.ok()) return s;
  const bool has_downlink =
      std::any_of(out.accounts.begin(), out.accounts.end(),
                  [](const ServiceAccount& a) { return a.role == AccountRole::downlink; });
  if (!has_downlink) {
    ServiceAccount added;
    if (auto s = registry.add_account(kDefaultDownlinkUser, AccountRole::downlink, added); !s.ok())
      return s;
    if (auto s = registry.accounts(out.accounts); !s.ok()) return s;
  }
  std::vector<BrokerAccount> logins;
  if (auto s = registry.device_broker_accounts(logins); !s.ok()) return s;
  out.devices = logins.size();
  for (const ServiceAccount& a : out.accounts) logins.push_back(a.login);

  gid_t group = kKeepGroup;
  if (auto s = broker_gid(options.broker_group, group); !s.ok()) return s;
  const bool shared = group != kKeepGroup;

  std::error_code ec;
  // A directory we create holds the password file: open only to the broker's group, if any.
  if (std::filesystem::create_directories(out_dir, ec)) {
    std::filesystem::permissions(out_dir,
                                 shared ? std::filesystem::perms::owner_all |
                                              std::filesystem::perms::group_read |
                                              std::filesystem::perms::group_exec
                                        : std::filesystem::perms::owner_all,
                                 ec);
    if (!ec && shared && ::chown(out_dir.c_str(), static_cast<uid_t>(-1), group) != 0)
      ec = std::error_code(errno, std::generic_category());
  }
  if (ec) return {RegistryErrc::io, "cannot create " + out_dir + ": " + ec.message()};
  const auto dir = std::filesystem::absolute(out_dir, ec);
  if (ec) return {RegistryErrc::io, "cannot resolve " + out_dir + ": " + ec.message()};
  out.password_file = (dir / "passwd").string();
  out.acl_file = (dir / "acl").string();

  std::string local_passwd;
  std::string local_acl;
  if (auto s = read_local_file(dir, kLocalPasswordFile, true, local_passwd); !s.ok()) return s;
  if (auto s = read_local_file(dir, kLocalAclFile, false, local_acl); !s.ok()) return s;
  std::vector<std::string> local_users;
  if (auto s = local_password_users(local_passwd, (dir / kLocalPasswordFile).string(), local_users);
      !s.ok())
    return s;
  std::set<std::string> registry_users;
  std::vector<std::string> device_users;
  for (std::size_t i = 0; i < logins.size(); ++i) {
    registry_users.insert(logins[i].username);
    if (i < out.devices) device_users.push_back(logins[i].username);
  }
  for (const std::string& user : local_users)
    if (registry_users.count(user) != 0)
      return {RegistryErrc::name_conflict,
              std::string(kLocalPasswordFile) + " has an account \"" + user +
                  "\", which is also a registry account: rename or remove one of them"};

  OpenSslRng rng;
  std::string passwd;
  if (auto s = broker_password_file_text(logins, rng, passwd); !s.ok()) return s;
  if (!local_passwd.empty()) passwd += local_passwd;
  if (auto s = write_file_atomically(out.password_file, passwd, shared ? 0640 : 0600, group);
      !s.ok()) {
    if (shared)
      return {s.code(), s.message() + " (giving files to group \"" + options.broker_group +
                            "\" needs root or membership of it; an empty broker group keeps "
                            "them private to you)"};
    return s;
  }
  if (auto s = write_file_atomically(
          out.acl_file, broker_acl_text(out.accounts, device_users, effective, local_acl), 0644,
          group);
      !s.ok())
    return s;
  out.conf_lines = broker_conf_lines(out.password_file, out.acl_file);
  return {};
}

}  // namespace dsekp::edge
