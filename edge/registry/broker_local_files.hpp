// The operator's own broker accounts, kept next to the files `dsekp keys broker-config` generates
// and never written by it: `passwd.local` (mosquitto_passwd lines) and `acl.local` (Mosquitto ACL
// blocks), appended to the generated `passwd` and `acl` on every run.
//
// Both end up in files the broker trusts, so they are held to what the generated files are:
// opened without following a symlink, regular, owned by root or by the user running dsekp,
// writable by nobody else, without other hard links, at most 1 MiB; passwd.local (password
// hashes) readable by no one outside its group. User names are the dev_id alphabet
// ([A-Za-z0-9._-], 1-64), each defined once, which leaves no room for blanks the broker would
// trim into a registry account's name. acl.local holds only `user NAME` and
// `topic read|write|readwrite|deny FILTER` lines (and comments), a `user` line first: a topic
// line before it would belong to the last generated account, a `pattern` line would reach every
// account, and a line Mosquitto cannot parse would make a SIGHUP reload drop the whole ACL.
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
