// The operator's own broker accounts, kept next to the files `dsekp keys broker-config` generates
// and never written by it: `passwd.local` (mosquitto_passwd lines) and `acl.local` (Mosquitto ACL
// blocks), appended to the generated `passwd` and `acl` on every run.
//
// Both end up in files the broker trusts, so they are held to what the generated files are:
// opened without following a symlink, regular, owned by root or by the user running dsekp,
// writable by nobody else, at most 1 MiB; passwd.local (password hashes) readable by no one
// outside its group. User names are the dev_id alphabet ([A-Za-z0-9._-], 1-64), which leaves no
// room for blanks the broker would trim into a registry account's name. acl.local holds only
// `user`, `topic` and `pattern` lines (and comments), and starts with `user` or `pattern`: a
// leading `topic` line would otherwise belong to the last generated account.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "registry_status.hpp"

namespace dsekp::edge {

inline constexpr std::string_view kLocalPasswordFile = "passwd.local";
inline constexpr std::string_view kLocalAclFile = "acl.local";

struct LocalBrokerFiles {
  std::string passwd;                     // passwd.local's text ("" if absent)
  std::string acl;                        // acl.local's text ("" if absent)
  std::vector<std::string> passwd_users;  // the user names passwd.local defines
};

/// Reads and checks both files in `dir` (each may be absent). Fails naming the file and line.
RegistryStatus read_local_broker_files(const std::filesystem::path& dir, LocalBrokerFiles& out);

}  // namespace dsekp::edge
