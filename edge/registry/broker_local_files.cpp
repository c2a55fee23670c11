// The operator's passwd.local and acl.local (see broker_local_files.hpp).
#include "broker_local_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

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
    users.push_back(user);
  }
  return {};
}

RegistryStatus check_acl(const std::string& text, const std::string& path) {
  std::istringstream lines(text);
  std::string line;
  bool first = true;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (skipped(line)) continue;
    const std::string keyword = line.substr(0, line.find_first_of(" \t"));
    if (keyword != "user" && keyword != "topic" && keyword != "pattern")
      return line_problem(path, number, "only user, topic and pattern lines belong here");
    if (first && keyword == "topic")
      return line_problem(path, number,
                          "starts with a topic line, which would grant it to the last generated "
                          "account: put a user line before it");
    first = false;
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
