// The operator's passwd.local and acl.local (see broker_local_files.hpp).
#include "broker_local_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <string_view>

#include "dsekp/spec.hpp"

namespace dsekp::edge {
namespace {

constexpr std::size_t kMaxLocalFileBytes = 1 << 20;

std::string errno_message(const std::string& what, const std::string& path, int err) {
  return what + " " + path + ": " + std::strerror(err);
}

// `path`'s text, "" if it does not exist.
RegistryStatus read_trusted_file(const std::string& path, bool holds_hashes, std::string& out) {
  out.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return {};
    if (err == ELOOP) return {RegistryErrc::insecure_file, path + " is a symbolic link"};
    return {RegistryErrc::io, errno_message("cannot open", path, err)};
  }
  struct stat st {};
  RegistryStatus status;
  if (::fstat(fd, &st) != 0) {
    status = {RegistryErrc::io, errno_message("cannot stat", path, errno)};
  } else if (!S_ISREG(st.st_mode)) {
    status = {RegistryErrc::insecure_file, path + " is not a regular file"};
  } else if (st.st_nlink != 1) {
    // A hard link is another file's contents under this name (e.g. /etc/shadow's).
    status = {RegistryErrc::insecure_file, path + " has other hard links"};
  } else if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    status = {RegistryErrc::insecure_file,
              path + " belongs to another user than root or the one running dsekp"};
  } else if ((st.st_mode & 0022) != 0) {
    status = {RegistryErrc::insecure_file,
              path + " is writable by group or others; run: chmod go-w " + path};
  } else if (holds_hashes && (st.st_mode & 0007) != 0) {
    // Hashes can be attacked offline: the generated passwd is never open to others either.
    status = {RegistryErrc::insecure_file,
              path + " holds password hashes but is open to others; run: chmod o-rwx " + path};
  } else {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        status = {RegistryErrc::io, errno_message("cannot read", path, errno)};
        break;
      }
      if (n == 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
      if (out.size() > kMaxLocalFileBytes) {
        status = {RegistryErrc::invalid_argument, path + " is larger than 1 MiB"};
        break;
      }
    }
  }
  ::close(fd);
  if (!status.ok()) {
    out.clear();
    return status;
  }
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
  if (auto s = read_trusted_file(passwd_path, true, out.passwd); !s.ok()) return s;
  if (auto s = read_trusted_file(acl_path, false, out.acl); !s.ok()) return s;
  if (auto s = check_passwd(out.passwd, passwd_path, out.passwd_users); !s.ok()) return s;
  return check_acl(out.acl, acl_path);
}

}  // namespace dsekp::edge
