// Loopback TCP helpers for the link emulator tests (see tcp_peer.hpp).
#include "tcp_peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <stdexcept>

namespace dsekp::linkemu::test {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

/// Milliseconds left until `deadline` (at least 0), for poll().
int left_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

bool wait_for(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  while (true) {
    const int rc = ::poll(&p, 1, left_ms(deadline));
    if (rc > 0) return true;
    if (rc == 0 || errno != EINTR) return false;
  }
}

}  // namespace

TcpServer::TcpServer(std::function<void(int)> handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = loopback(0);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("test server: cannot listen on loopback");
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpServer::~TcpServer() {
  stop_.store(true);
  acceptor_.join();
  ::close(listen_fd_);
  {
    const std::lock_guard lock(mutex_);
    for (const int fd : open_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : handlers_) t.join();
}

void TcpServer::accept_loop() {
  while (!stop_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    accepted_.fetch_add(1);
    const std::lock_guard lock(mutex_);
    open_.insert(fd);
    handlers_.emplace_back([this, fd] {
      handler_(fd);
      const std::lock_guard inner(mutex_);
      open_.erase(fd);
      ::close(fd);
    });
  }
}

std::uint16_t closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = loopback(0);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in addr = loopback(port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

bool send_all(int fd, const void* data, std::size_t size, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    if (!wait_for(fd, POLLOUT, deadline)) return false;
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool send_all(int fd, const Bytes& data, milliseconds timeout) {
  return send_all(fd, data.data(), data.size(), timeout);
}

bool recv_exact(int fd, void* data, std::size_t size, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto* p = static_cast<std::uint8_t*>(data);
  while (size > 0) {
    if (!wait_for(fd, POLLIN, deadline)) return false;
    const ssize_t n = ::recv(fd, p, size, MSG_DONTWAIT);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

Ending wait_for_end(int fd, milliseconds timeout, std::size_t* received) {
  const auto deadline = Clock::now() + timeout;
  std::uint8_t buf[4096];
  bool data = false;
  while (true) {
    if (!wait_for(fd, POLLIN, deadline)) return data ? Ending::data : Ending::timeout;
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return Ending::fin;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return Ending::reset;
    }
    data = true;
    if (received != nullptr) *received += static_cast<std::size_t>(n);
  }
}

bool exchange(int fd, const Bytes& out, Bytes& in, std::size_t in_size, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  in.resize(in_size);
  std::size_t sent = 0;
  std::size_t received = 0;
  while (sent < out.size() || received < in_size) {
    pollfd p{fd, 0, 0};
    if (sent < out.size()) p.events |= POLLOUT;
    if (received < in_size) p.events |= POLLIN;
    const int rc = ::poll(&p, 1, left_ms(deadline));
    if (rc == 0) return false;
    if (rc < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if ((p.revents & POLLIN) != 0) {
      const ssize_t n = ::recv(fd, in.data() + received, in_size - received, MSG_DONTWAIT);
      if (n == 0) return false;
      if (n > 0) received += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    }
    if ((p.revents & POLLOUT) != 0 && sent < out.size()) {
      const ssize_t n =
          ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) sent += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    }
    if ((p.revents & (POLLERR | POLLNVAL)) != 0) return false;
  }
  return true;
}

void echo(int fd) {
  std::uint8_t buf[65536];
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (wait_for(fd, POLLIN, deadline)) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    if (!send_all(fd, buf, static_cast<std::size_t>(n), milliseconds(10000))) break;
  }
  ::shutdown(fd, SHUT_WR);
}

Bytes random_bytes(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  Bytes out(size);
  for (auto& b : out) b = static_cast<std::uint8_t>(engine());
  return out;
}

}  // namespace dsekp::linkemu::test
