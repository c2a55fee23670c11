// The registry's broker accounts that are not devices (see device_registry.hpp, broker_accounts).
#include <array>
#include <chrono>

#include "device_registry.hpp"
#include "text_encoding.hpp"

namespace dsekp::edge {
namespace {

constexpr std::array<const char*, 3> kRoleNames = {"edge", "reader", "downlink"};

RegistryStatus invalid_name(std::string_view name) {
  return {RegistryErrc::invalid_name, "invalid broker user \"" + std::string(name.substr(0, 80)) +
                                          "\": 1-64 characters of A-Z a-z 0-9 . _ - are allowed"};
}

}  // namespace

const char* account_role_name(AccountRole role) noexcept {
  const auto i = static_cast<std::size_t>(role);
  return i < kRoleNames.size() ? kRoleNames[i] : "unknown";
}

bool parse_account_role(std::string_view text, AccountRole& out) noexcept {
  for (std::size_t i = 0; i < kRoleNames.size(); ++i) {
    if (text == kRoleNames[i]) {
      out = static_cast<AccountRole>(i);
      return true;
    }
  }
  return false;
}

RegistryStatus DeviceRegistry::add_account(std::string_view username, AccountRole role,
                                           ServiceAccount& out) {
  // The dev_id alphabet: no ':' (the password file's separator), nothing Mosquitto refuses in a
  // user name or an ACL line.
  if (!is_valid_dev_id(username)) return invalid_name(username);
  SqliteTransaction tx(db_);
  if (auto s = tx.begin(); !s.ok()) return s;
  if (auto s = account(username, out); s.ok()) {
    if (out.role == role) return tx.commit();
    return {RegistryErrc::name_conflict, "\"" + std::string(username) + "\" is already a " +
                                             account_role_name(out.role) + " account"};
  } else if (s.code() != RegistryErrc::not_found) {
    return s;
  }
  DeviceInfo device;
  if (auto s = info(username, device); s.ok())
    return {RegistryErrc::name_conflict,
            "\"" + std::string(username) + "\" is a registered dev_id"};
  std::array<std::uint8_t, kBrokerPasswordBytes> password{};
  if (rng_.fill(password) != Error::ok)
    return {RegistryErrc::crypto_failure, "the CSPRNG failed to draw a broker password"};
  out.login = {std::string(username), to_hex(password)};
  out.role = role;
  secure_wipe(password);
  RegistryStatement insert;
  if (auto s = db_.prepare(
          "INSERT INTO broker_accounts (username, role, password, created_ms) VALUES (?1, ?2, ?3, "
          "?4)",
          insert);
      !s.ok())
    return s;
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  if (auto s = insert.bind_text(1, username); !s.ok()) return s;
  if (auto s = insert.bind_text(2, account_role_name(role)); !s.ok()) return s;
  if (auto s = insert.bind_text(3, out.login.password); !s.ok()) return s;
  if (auto s = insert.bind_int64(4, now_ms); !s.ok()) return s;
  if (auto s = insert.run(); !s.ok()) return s;
  return tx.commit();
}

RegistryStatus DeviceRegistry::remove_account(std::string_view username) {
  if (BrokerAccount edge; edge_broker_account(edge).ok() && edge.username == username)
    return {RegistryErrc::name_conflict, "\"" + std::string(username) +
                                             "\" is the default edge user (--edge-user), not an "
                                             "account that can be removed"};
  ServiceAccount existing;
  if (auto s = account(username, existing); !s.ok()) return s;
  RegistryStatement stmt;
  if (auto s = db_.prepare("DELETE FROM broker_accounts WHERE username = ?1", stmt); !s.ok())
    return s;
  if (auto s = stmt.bind_text(1, username); !s.ok()) return s;
  return stmt.run();
}

RegistryStatus DeviceRegistry::account(std::string_view username, ServiceAccount& out) {
  if (BrokerAccount edge; edge_broker_account(edge).ok() && edge.username == username) {
    out = {std::move(edge), AccountRole::edge};
    return {};
  }
  RegistryStatement stmt;
  if (auto s = db_.prepare("SELECT role, password FROM broker_accounts WHERE username = ?1", stmt);
      !s.ok())
    return s;
  if (auto s = stmt.bind_text(1, username); !s.ok()) return s;
  bool row = false;
  if (auto s = stmt.step(row); !s.ok()) return s;
  if (!row) return {RegistryErrc::not_found, "no broker account \"" + std::string(username) + "\""};
  if (!parse_account_role(stmt.column_text(0), out.role))
    return {RegistryErrc::corrupt, "broker account \"" + std::string(username) + "\": bad role"};
  out.login = {std::string(username), stmt.column_text(1)};
  return {};
}

RegistryStatus DeviceRegistry::accounts(std::vector<ServiceAccount>& out) {
  out.clear();
  if (BrokerAccount edge; edge_broker_account(edge).ok())
    out.push_back({std::move(edge), AccountRole::edge});
  RegistryStatement stmt;
  if (auto s = db_.prepare("SELECT username, role, password FROM broker_accounts ORDER BY username",
                           stmt);
      !s.ok())
    return s;
  for (;;) {
    bool row = false;
    if (auto s = stmt.step(row); !s.ok()) return s;
    if (!row) return {};
    ServiceAccount a;
    a.login = {stmt.column_text(0), stmt.column_text(2)};
    if (!parse_account_role(stmt.column_text(1), a.role))
      return {RegistryErrc::corrupt, "broker account \"" + a.login.username + "\": bad role"};
    if (!out.empty() && out.front().login.username == a.login.username) continue;
    out.push_back(std::move(a));
  }
}

}  // namespace dsekp::edge
