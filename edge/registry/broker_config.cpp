// Mosquitto password + ACL files from the registry (see broker_config.hpp).
#include "broker_config.hpp"

#include <algorithm>
#include <filesystem>
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
                            const BrokerConfigOptions& options) {
  const std::string& p = options.topic_prefix;
  const std::string psk_read = options.psk_baseline ? "topic read " + p + "psk/data\n" : "";
  const std::string psk_write = options.psk_baseline ? "pattern write " + p + "psk/data\n" : "";
  // Per-device topics bind what a device account may publish to its own dev_id (the edge checks
  // the frame's dev_id against the topic's); shared ones let it publish frames naming any device.
  const bool per_device = options.uplink_topics == UplinkTopics::per_device;
  const std::string uplink_write =
      per_device
          ? "pattern write " + p + "dsekp/init/%u\n" + "pattern write " + p + "dsekp/data/%u\n"
          : "pattern write " + p + "dsekp/init\n" + "pattern write " + p + "dsekp/data\n";
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
         uplink_write + psk_write + "pattern read " + p + "dsekp/init/ack/%u\n" + "pattern read " +
         p + "dsekp/down/%u\n" + "pattern read " + p + "dsekp/rekey/%u\n";
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
         "# own: repeat it after every other listener line). The broker's user must be able to\n"
         "# read both files (e.g. chown mosquitto " +
         password_file +
         ").\n"
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

  std::error_code ec;
  // A directory we create is private: it holds the password file.
  if (std::filesystem::create_directories(out_dir, ec))
    std::filesystem::permissions(out_dir, std::filesystem::perms::owner_all, ec);
  if (ec) return {RegistryErrc::io, "cannot create " + out_dir + ": " + ec.message()};
  const auto dir = std::filesystem::absolute(out_dir, ec);
  if (ec) return {RegistryErrc::io, "cannot resolve " + out_dir + ": " + ec.message()};
  out.password_file = (dir / "passwd").string();
  out.acl_file = (dir / "acl").string();

  OpenSslRng rng;
  std::string passwd;
  if (auto s = broker_password_file_text(logins, rng, passwd); !s.ok()) return s;
  if (auto s = write_file_atomically(out.password_file, passwd, 0600); !s.ok()) return s;
  if (auto s = write_file_atomically(out.acl_file, broker_acl_text(out.accounts, effective), 0644);
      !s.ok())
    return s;
  out.conf_lines = broker_conf_lines(out.password_file, out.acl_file);
  return {};
}

}  // namespace dsekp::edge
