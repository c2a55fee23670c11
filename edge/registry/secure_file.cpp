// Private file creation, permission check and atomic replacement (see secure_file.hpp).
#include "secure_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace dsekp::edge {
namespace {

/// "what path: reason". Callers pass errno's value read before any allocation could change it.
std::string errno_text(const char* what, const std::string& path, int err) {
  return std::string(what) + " " + path + ": " + std::strerror(err);
}

/// Closes a descriptor on every return path.
class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }
  /// Closes now and reports close()'s result (a write error can surface only here).
  bool close_checked() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

}  // namespace

RegistryStatus create_file_if_missing(const std::string& path, mode_t mode, bool& created) {
  created = false;
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == EEXIST) return {};
    return {RegistryErrc::io, errno_text("cannot create", path, err)};
  }
  // The umask can only clear bits, but a permissive default ACL on the directory could add some:
  // set the mode explicitly on the open descriptor.
  if (::fchmod(fd.get(), mode) != 0) {
    const int err = errno;
    return {RegistryErrc::io, errno_text("cannot chmod", path, err)};
  }
  created = true;
  if (!fd.close_checked()) {
    const int err = errno;
    return {RegistryErrc::io, errno_text("cannot close", path, err)};
  }
  return {};
}

RegistryStatus check_private_file(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    const bool missing = err == ENOENT;
    return {missing ? RegistryErrc::not_found : RegistryErrc::io,
            errno_text(missing ? "no such registry" : "cannot stat", path, err)};
  }
  if (!S_ISREG(st.st_mode))
    return {RegistryErrc::insecure_file, path + " is not a regular file (symlinks are refused)"};
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return {RegistryErrc::insecure_file,
            path + " holds device secrets but has mode " + mode + "; run: chmod 600 " + path};
  }
  return {};
}

RegistryStatus read_trusted_file(const std::string& path, std::size_t max_bytes, bool no_other_read,
                                 std::string& out) {
  out.clear();
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return {};
    if (err == ELOOP) return {RegistryErrc::insecure_file, path + " is a symbolic link"};
    return {RegistryErrc::io, errno_text("cannot open", path, err)};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return {RegistryErrc::io, errno_text("cannot stat", path, errno)};
  if (!S_ISREG(st.st_mode)) return {RegistryErrc::insecure_file, path + " is not a regular file"};
  if (st.st_nlink != 1) return {RegistryErrc::insecure_file, path + " has other hard links"};
  if (st.st_uid != 0 && st.st_uid != ::geteuid())
    return {RegistryErrc::insecure_file,
            path + " belongs to another user than root or the one running dsekp"};
  if ((st.st_mode & 0022) != 0)
    return {RegistryErrc::insecure_file,
            path + " is writable by group or others; run: chmod go-w " + path};
  if (no_other_read && (st.st_mode & 0007) != 0)
    return {RegistryErrc::insecure_file,
            path + " holds secrets but is open to others; run: chmod o-rwx " + path};
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      out.clear();
      return {RegistryErrc::io, errno_text("cannot read", path, err)};
    }
    if (n == 0) return {};
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > max_bytes) {
      out.clear();
      return {RegistryErrc::invalid_argument,
              path + " is larger than " + std::to_string(max_bytes) + " bytes"};
    }
  }
}

RegistryStatus read_password_file(const std::string& path, std::string& out) {
  out.clear();
  std::string text;
  if (auto s = read_trusted_file(path, 4096, true, text); !s.ok()) return s;
  const std::size_t end = text.find('\n');
  out = text.substr(0, end);
  if (!out.empty() && out.back() == '\r') out.pop_back();  // a file written on Windows
  std::fill(text.begin(), text.end(), '\0');
  if (out.empty())
    return {RegistryErrc::invalid_argument,
            path + ": no password on its first line (or no such file)"};
  return {};
}

RegistryStatus write_file_atomically(const std::string& path, std::string_view contents,
                                     mode_t mode, gid_t group) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  ::unlink(temp.c_str());  // a leftover of a crashed run with the same pid
  Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (fd.get() < 0) {
    const int err = errno;
    return {RegistryErrc::io, errno_text("cannot create", temp, err)};
  }
  const auto fail = [&temp](const char* what, int err) {
    RegistryStatus status{RegistryErrc::io, errno_text(what, temp, err)};
    ::unlink(temp.c_str());
    return status;
  };
  if (group != kKeepGroup && ::fchown(fd.get(), static_cast<uid_t>(-1), group) != 0)
    return fail("cannot change the group of", errno);
  if (::fchmod(fd.get(), mode) != 0) return fail("cannot chmod", errno);
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd.get(), contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write", errno);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("cannot fsync", errno);
  if (!fd.close_checked()) return fail("cannot close", errno);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return RegistryStatus{RegistryErrc::io, errno_text("cannot rename over", path, err)};
  }
  return {};
}

}  // namespace dsekp::edge
