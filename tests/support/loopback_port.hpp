// Loopback TCP helpers shared by the tests' private servers (Mosquitto, the restartable persistent
// Mosquitto, Redis, NATS, RabbitMQ): pick a free port, see whether a server accepts connections
// yet, and the user name a server started as root should keep.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dsekp::test {

inline sockaddr_in loopback_address(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

/// A port that was free a moment ago (the kernel's choice for an ephemeral bind). Another
/// process could take it before the server does; callers retry a failed start.
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr = loopback_address(0);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

/// True if a TCP connection to 127.0.0.1:`port` succeeds now.
inline bool accepts_connections(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const sockaddr_in addr = loopback_address(port);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

/// Mosquitto started as root switches to the user named in its config ("mosquitto" by default),
/// which could not read the test's 0600 files; naming the current user keeps it as it is.
inline std::string current_user() {
  const passwd* pw = ::getpwuid(::geteuid());
  if (pw == nullptr) throw std::runtime_error("cannot find the current user's name");
  return pw->pw_name;
}

}  // namespace dsekp::test
