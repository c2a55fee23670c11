// Internal: the few socket operations the link emulator needs, with errors as text.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace dsekp::linkemu {

/// Owns a file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  [[nodiscard]] const sockaddr* get() const noexcept {
    return reinterpret_cast<const sockaddr*>(&storage);
  }
  [[nodiscard]] int family() const noexcept { return storage.ss_family; }
};

/// The first TCP address of host:port (numeric or a name). False with `error` set.
[[nodiscard]] bool resolve_tcp(const std::string& host, std::uint16_t port, SocketAddress& out,
                               std::string& error);

/// A non-blocking listening socket bound to `address` (SO_REUSEADDR). Invalid with `error` set.
[[nodiscard]] UniqueFd listen_tcp(const SocketAddress& address, std::string& error);

/// The numeric address and port a socket is bound to.
[[nodiscard]] bool local_endpoint(int fd, std::string& address, std::uint16_t& port);

/// TCP_NODELAY: the relay must not add Nagle's wait to the delays it means to add.
void set_no_delay(int fd) noexcept;

/// Closes with an RST instead of a FIN (SO_LINGER with a zero timeout).
void close_with_reset(int fd) noexcept;

/// The text of an errno value.
[[nodiscard]] std::string errno_text(int error);

}  // namespace dsekp::linkemu
