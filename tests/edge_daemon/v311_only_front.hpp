// V311OnlyFront: makes a real Mosquitto look like a broker that speaks only MQTT 3.1.1, to test
// the edge's `--mqtt-version auto` fallback (no broker on this machine refuses MQTT 5).
//
// A loopback TCP front in front of the real broker. For each connection it reads the client's
// first packet, the CONNECT, and looks at its protocol level. Level 5 gets what MQTT 3.1.1
// section 3.1.2.2 tells a 3.1.1 server to answer: a CONNACK with return code 0x01 ("unacceptable
// protocol level"), then the connection is closed (or, in Refusal::silent, only the close). Any
// other level is relayed byte for byte to the broker for the rest of the connection. So everything
// after the refusal is the real broker.
//
// One thread, one poll() loop over the listening socket and every relayed pair; every wait is
// bounded (poll timeouts, SO_RCVTIMEO on the CONNECT read), and the destructor stops the thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace dsekp::edge::testing {

class V311OnlyFront {
 public:
  /// How a level-5 CONNECT is turned away.
  enum class Refusal {
    connack,  // CONNACK return code 0x01, then close (MQTT 3.1.1 section 3.1.2.2; NATS 2.9)
    silent,   // close without any answer (what RabbitMQ 3.10's MQTT plugin does)
  };

  explicit V311OnlyFront(int broker_port, Refusal refusal = Refusal::connack)
      : broker_port_(broker_port), refusal_(refusal) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = loopback(0);
    if (listen_fd_ < 0 ||
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 8) != 0)
      throw std::runtime_error("V311OnlyFront: cannot listen on loopback");
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~V311OnlyFront() {
    stop_ = true;
    thread_.join();
    for (const auto& [client, upstream] : pairs_) {
      ::close(client);
      ::close(upstream);
    }
    ::close(listen_fd_);
  }
  V311OnlyFront(const V311OnlyFront&) = delete;
  V311OnlyFront& operator=(const V311OnlyFront&) = delete;

  [[nodiscard]] int port() const noexcept { return port_; }
  /// The protocol level of every CONNECT seen, in order (5: refused; 4 = 3.1.1: relayed).
  [[nodiscard]] std::vector<int> levels() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return levels_;
  }

 private:
  static sockaddr_in loopback(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
  }

  static bool read_exact(int fd, std::uint8_t* out, std::size_t n) {
    for (std::size_t got = 0; got < n;) {
      const ssize_t r = ::recv(fd, out + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<std::size_t>(r);
    }
    return true;
  }

  /// The whole first packet of `fd` (fixed header included); nullopt if it is not a CONNECT.
  static std::optional<std::vector<std::uint8_t>> read_connect(int fd) {
    timeval timeout{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::vector<std::uint8_t> packet(1);
    if (!read_exact(fd, packet.data(), 1) || packet[0] != 0x10) return std::nullopt;
    std::size_t remaining = 0;
    for (int shift = 0; shift <= 21; shift += 7) {  // Remaining Length: at most 4 bytes
      std::uint8_t b = 0;
      if (!read_exact(fd, &b, 1)) return std::nullopt;
      packet.push_back(b);
      remaining |= std::size_t{b & 0x7Fu} << shift;
      if ((b & 0x80) == 0) break;
    }
    if (remaining < 7 || remaining > 65536) return std::nullopt;
    const std::size_t header = packet.size();
    packet.resize(header + remaining);
    if (!read_exact(fd, packet.data() + header, remaining)) return std::nullopt;
    return packet;
  }

  void accept_one() {
    const int client = ::accept(listen_fd_, nullptr, nullptr);
    if (client < 0) return;
    const auto connect = read_connect(client);
    if (!connect) {
      ::close(client);
      return;
    }
    // After the fixed header: the protocol name (2-byte length + "MQTT"), then the level.
    std::size_t at = 1;
    while ((*connect)[at] & 0x80) ++at;  // the Remaining Length's continuation bytes
    const int level = (*connect)[at + 1 + 6];
    {
      std::lock_guard<std::mutex> lock(mutex_);
      levels_.push_back(level);
    }
    if (level == 5) {
      const std::uint8_t refusal[] = {0x20, 0x02, 0x00, 0x01};
      if (refusal_ == Refusal::connack) (void)::send(client, refusal, sizeof refusal, MSG_NOSIGNAL);
      ::close(client);
      return;
    }
    const int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = loopback(broker_port_);
    if (upstream < 0 || ::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::send(upstream, connect->data(), connect->size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(connect->size())) {
      ::close(client);
      if (upstream >= 0) ::close(upstream);
      return;
    }
    pairs_.emplace_back(client, upstream);
  }

  /// Copies what `from` has to `to`; false when either side is closed.
  static bool pump(int from, int to) {
    std::uint8_t buf[16384];
    const ssize_t n = ::recv(from, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) return false;
    for (ssize_t sent = 0; sent < n;) {
      const ssize_t w = ::send(to, buf + sent, static_cast<std::size_t>(n - sent), MSG_NOSIGNAL);
      if (w <= 0) return false;
      sent += w;
    }
    return true;
  }

  void run() {
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (const auto& [client, upstream] : pairs_) {
        fds.push_back({client, POLLIN, 0});
        fds.push_back({upstream, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
      const std::size_t polled = pairs_.size();
      if (fds[0].revents & POLLIN) accept_one();
      std::vector<std::pair<int, int>> alive;
      for (std::size_t i = 0; i < polled; ++i) {
        const auto [client, upstream] = pairs_[i];
        bool ok = true;
        if (fds[1 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) ok = pump(client, upstream);
        if (ok && (fds[2 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)))
          ok = pump(upstream, client);
        if (ok) {
          alive.emplace_back(client, upstream);
        } else {
          ::close(client);
          ::close(upstream);
        }
      }
      // accept_one() may have appended a pair after the fds were built: keep it.
      for (std::size_t i = polled; i < pairs_.size(); ++i) alive.push_back(pairs_[i]);
      pairs_ = std::move(alive);
    }
  }

  int broker_port_;
  Refusal refusal_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<std::pair<int, int>> pairs_;  // (client, broker), loop thread only
  mutable std::mutex mutex_;
  std::vector<int> levels_;
  std::thread thread_;
};

}  // namespace dsekp::edge::testing
