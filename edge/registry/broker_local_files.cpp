// The operator's passwd.local and acl.local (see broker_local_files.hpp).
#include "broker_local_files.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>

#include "dsekp/spec.hpp"
#include "secure_file.hpp"

namespace dsekp::edge {
namespace {

constexpr std::size_t kMaxLocalFileBytes = 1 << 20;

// `path`'s text, "" if it does not exist, ending in a line break.
RegistryStatus read_local_file(const std::string& path, bool holds_hashes, std::string& out) {
  if (auto s = read_trusted_file(path, kMaxLocalFileBytes, holds_hashes, out); !s.ok()) return s;
  if (!out.empty() && out.back() != '\n') out += '\n';
  return {};
}

RegistryStatus line_problem(const std::string& path, int number, const std::string& why) {
  return {RegistryErrc::invalid_argument, path + " line " + std::to_string(number) + ": " + why};
}

bool skipped(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos || line.front() == '#';
}

RegistryStatus check_passwd(const std::string& text, const std::string& path,
                            std::vector<std::string>& users) {
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (skipped(line)) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos)
      return line_problem(path, number,
                          "not a \"user:hash\" line (make them with mosquitto_passwd)");
    const std::string user = line.substr(0, colon);
    if (!is_valid_dev_id(user))
      return line_problem(path, number,
                          "user names are 1-64 characters of A-Z a-z 0-9 . _ - (got \"" +
                              user.substr(0, 80) + "\")");
    if (std::find(users.begin(), users.end(), user) != users.end())
      return line_problem(path, number, "\"" + user + "\" is defined twice");
    users.push_back(user);
  }
  return {};
}

// An MQTT topic filter Mosquitto accepts in an ACL line: printable ASCII without spaces, `+` only
// as a whole level, `#` only as the whole last level.
bool valid_topic_filter(std::string_view filter) {
  if (filter.empty() || filter.size() > 1024) return false;
  std::size_t level_start = 0;
  for (std::size_t i = 0; i <= filter.size(); ++i) {
    if (i < filter.size() && filter[i] != '/') {
      const char c = filter[i];
      if (c <= ' ' || c > '~') return false;
      continue;
    }
    const std::string_view level = filter.substr(level_start, i - level_start);
    if (level.find_first_of("+#") != std::string_view::npos && level.size() != 1) return false;
    if (level == "#" && i != filter.size()) return false;
    level_start = i + 1;
  }
  return true;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The one grammar this file may use, stricter than Mosquitto's own: a line Mosquitto rejects on a
// SIGHUP would leave the broker running with no ACL at all, so every line must be one it parses
// and means what it says. `user NAME`, `topic ACCESS FILTER`, comments, blank lines; single
// spaces (Mosquitto splits on spaces only, so a tab would change what it reads); `user` first.
RegistryStatus check_acl(const std::string& text, const std::string& path) {
  std::istringstream lines(text);
  std::string line;
  bool seen_user = false;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string> w = words_of(line);
    std::string canonical;
    for (const std::string& word : w) canonical += (canonical.empty() ? "" : " ") + word;
    if (canonical != line)
      return line_problem(
          path, number, "words separated by single spaces, no tabs or leading or trailing blanks");
    if (w[0] == "user") {
      if (w.size() != 2 || !is_valid_dev_id(w[1]))
        return line_problem(path, number, "expected `user NAME`, NAME of [A-Za-z0-9._-]");
      seen_user = true;
    } else if (w[0] == "topic") {
      if (!seen_user)
        return line_problem(path, number,
                            "a topic line before any user line would belong to the last generated "
                            "account: put a user line first");
      if (w.size() != 3 ||
          (w[1] != "read" && w[1] != "write" && w[1] != "readwrite" && w[1] != "deny") ||
          !valid_topic_filter(w[2]))
        return line_problem(path, number,
                            "expected `topic read|write|readwrite|deny FILTER` with a valid MQTT "
                            "topic filter");
    } else if (w[0] == "pattern") {
      return line_problem(path, number,
                          "no pattern lines: a pattern applies to every account, devices included");
    } else {
      return line_problem(path, number, "only user and topic lines (and comments) belong here");
    }
  }
  return {};
}

}  // namespace

RegistryStatus read_local_broker_files(const std::filesystem::path& dir, LocalBrokerFiles& out) {
  out = {};
  const std::string passwd_path = (dir / kLocalPasswordFile).string();
  const std::string acl_path = (dir / kLocalAclFile).string();
  if (auto s = read_local_file(passwd_path, true, out.passwd); !s.ok()) return s;
  if (auto s = read_local_file(acl_path, false, out.acl); !s.ok()) return s;
  if (auto s = check_passwd(out.passwd, passwd_path, out.passwd_users); !s.ok()) return s;
  return check_acl(out.acl, acl_path);
}

}  // namespace dsekp::edge
