// Socket helpers (see socket_util.hpp).
#include "linkemu/socket_util.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dsekp::linkemu {

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool resolve_tcp(const std::string& host, std::uint16_t port, SocketAddress& out,
                 std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* list = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  if (rc != 0 || list == nullptr) {
    error = "cannot resolve \"" + host + "\": " + ::gai_strerror(rc);
    return false;
  }
  std::memcpy(&out.storage, list->ai_addr, list->ai_addrlen);
  out.length = list->ai_addrlen;
  ::freeaddrinfo(list);
  return true;
}

UniqueFd listen_tcp(const SocketAddress& address, std::string& error) {
  UniqueFd fd(::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    error = "socket: " + errno_text(errno);
    return {};
  }
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), address.get(), address.length) != 0) {
    error = "bind: " + errno_text(errno);
    return {};
  }
  if (::listen(fd.get(), SOMAXCONN) != 0) {
    error = "listen: " + errno_text(errno);
    return {};
  }
  return fd;
}

bool local_endpoint(int fd, std::string& address, std::uint16_t& port) {
  SocketAddress local;
  local.length = sizeof local.storage;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local.storage), &local.length) != 0)
    return false;
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (::getnameinfo(local.get(), local.length, host, sizeof host, service, sizeof service,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return false;
  address = host;
  port = static_cast<std::uint16_t>(std::stoul(service));
  return true;
}

void set_no_delay(int fd) noexcept {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void close_with_reset(int fd) noexcept {
  const linger abort_now{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_now, sizeof abort_now);
  ::close(fd);
}

std::string errno_text(int error) {
  return std::strerror(error);
}

}  // namespace dsekp::linkemu
