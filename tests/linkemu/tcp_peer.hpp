// Loopback TCP endpoints for the link emulator tests: a server that runs a handler per accepted
// connection on its own thread, a blocking client connect, and I/O helpers that all take a
// deadline, so a broken relay fails a test instead of hanging it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace dsekp::linkemu::test {

using Bytes = std::vector<std::uint8_t>;
using std::chrono::milliseconds;

/// Listens on 127.0.0.1 (any free port); each accepted socket goes to `handler` on a new thread
/// and is closed when the handler returns.
class TcpServer {
 public:
  explicit TcpServer(std::function<void(int fd)> handler);
  /// Stops accepting, shuts every open connection down (so handlers blocked in I/O return) and
  /// joins all threads.
  ~TcpServer();
  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] int accepted() const noexcept { return accepted_.load(); }

 private:
  void accept_loop();

  std::function<void(int)> handler_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  std::mutex mutex_;
  std::set<int> open_;
  std::vector<std::thread> handlers_;
};

/// A port on 127.0.0.1 with nothing listening (bound, then closed).
std::uint16_t closed_port();

/// A connected socket to 127.0.0.1:port (TCP_NODELAY); throws on failure.
int connect_loopback(std::uint16_t port);

/// Owns a socket fd.
class Socket {
 public:
  explicit Socket(int fd) noexcept : fd_(fd) {}
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  [[nodiscard]] int fd() const noexcept { return fd_; }

 private:
  int fd_;
};

bool send_all(int fd, const void* data, std::size_t size, milliseconds timeout);
bool send_all(int fd, const Bytes& data, milliseconds timeout);
/// Reads exactly `size` bytes; false on end of stream, error or timeout.
bool recv_exact(int fd, void* data, std::size_t size, milliseconds timeout);

/// What a socket saw when waiting for the end of its connection.
enum class Ending { fin, reset, timeout, data };
/// Reads (and discards) until the peer ends the connection: fin or reset; on timeout, `data` if
/// bytes arrived meanwhile, else `timeout`. `received` (if given) counts the bytes read.
Ending wait_for_end(int fd, milliseconds timeout, std::size_t* received = nullptr);

/// Sends `out` while receiving `in_size` bytes into `in` (poll, so neither side blocks the
/// other when buffers fill); false on error, early end or timeout.
bool exchange(int fd, const Bytes& out, Bytes& in, std::size_t in_size, milliseconds timeout);

/// Handler: echoes everything until the peer ends its side, then ends its own.
void echo(int fd);

/// Deterministic pseudo-random bytes.
Bytes random_bytes(std::size_t size, std::uint64_t seed);

}  // namespace dsekp::linkemu::test
