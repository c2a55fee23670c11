// Mosquitto password + ACL files from the registry (see broker_config.hpp).
#include "broker_config.hpp"

#include <filesystem>
#include <system_error>

#include "crypto/openssl/openssl_crypto.hpp"
#include "mosquitto_password.hpp"
#include "secure_file.hpp"

namespace dsekp::edge {

std::string broker_acl_text(std::string_view edge_user) {
  const std::string user(edge_user);
  return "# DSEKP broker ACL, written by `dsekp keys broker-config`: regenerate, do not edit.\n"
         "# Devices log in with their dev_id as user name (%u below).\n"
         "\n"
         "# The edge reads all device traffic and answers on every device's topics.\n"
         "user " +
         user +
         "\n"
         "topic read dsekp/init\n"
         "topic read dsekp/data\n"
         "topic read psk/data\n"
         "topic write dsekp/init/ack/+\n"
         "topic write dsekp/down/+\n"
         "# Decrypted readings it republishes (readers need an account and a `topic read "
         "plain/#`).\n"
         "topic write plain/#\n"
         "# `dsekp edge send` logs in as the edge too: downlink requests and their results.\n"
         "topic readwrite dsekp/admin/#\n"
         "\n"
         "# Devices publish uplink frames and read only their own ACK and downlink topics.\n"
         "pattern write dsekp/init\n"
         "pattern write dsekp/data\n"
         "pattern write psk/data\n"
         "pattern read dsekp/init/ack/%u\n"
         "pattern read dsekp/down/%u\n";
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
  return "# DSEKP broker security (dsekp keys broker-config). The broker's user must be able to\n"
         "# read both files (e.g. chown mosquitto " +
         password_file +
         ").\n"
         "per_listener_settings false\n"
         "allow_anonymous false\n"
         "password_file " +
         password_file + "\nacl_file " + acl_file + "\n";
}

RegistryStatus write_broker_config(DeviceRegistry& registry, const std::string& out_dir,
                                   std::string_view edge_user, BrokerConfigFiles& out) {
  if (auto s = registry.set_edge_broker_user(edge_user, out.edge); !s.ok()) return s;
  std::vector<BrokerAccount> accounts;
  if (auto s = registry.device_broker_accounts(accounts); !s.ok()) return s;
  out.devices = accounts.size();
  accounts.push_back(out.edge);

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
  if (auto s = broker_password_file_text(accounts, rng, passwd); !s.ok()) return s;
  if (auto s = write_file_atomically(out.password_file, passwd, 0600); !s.ok()) return s;
  if (auto s = write_file_atomically(out.acl_file, broker_acl_text(edge_user), 0644); !s.ok())
    return s;
  out.conf_lines = broker_conf_lines(out.password_file, out.acl_file);
  return {};
}

}  // namespace dsekp::edge
