// The emulator as a relay (no impairment): bytes through unchanged in both directions and over
// several connections at once, the end of each stream passed on in order, a target that refuses,
// a stop with connections open, and the library's start/stop contract.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "linkemu/link_emulator.hpp"
#include "tcp_peer.hpp"

namespace dsekp::linkemu {
namespace {

using namespace std::chrono_literals;
using test::Bytes;
using test::Socket;

constexpr std::size_t kMegabyte = 1 << 20;

/// Starts `emulator` in front of `target_port`; fails the test if it does not start.
std::uint16_t start(LinkEmulator& emulator, std::uint16_t target_port) {
  std::string error;
  const std::uint16_t port = emulator.start("127.0.0.1", 0, "127.0.0.1", target_port, error);
  EXPECT_NE(port, 0) << error;
  return port;
}

TEST(Relay, OneMegabyteEachWayByteIdentical) {
  // The server sends its own megabyte while checking the client's, byte for byte.
  std::atomic<bool> server_ok{false};
  test::TcpServer server([&](int fd) {
    std::uint64_t seed = 0;
    if (!test::recv_exact(fd, &seed, sizeof seed, 5s)) return;
    Bytes received;
    server_ok =
        test::exchange(fd, test::random_bytes(kMegabyte, seed + 1000), received, kMegabyte, 15s) &&
        received == test::random_bytes(kMegabyte, seed);
  });
  LinkEmulator emulator(LinkSpec{}, 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);

  Socket client(test::connect_loopback(port));
  const std::uint64_t seed = 5;
  ASSERT_TRUE(test::send_all(client.fd(), &seed, sizeof seed, 5s));
  Bytes received;
  ASSERT_TRUE(
      test::exchange(client.fd(), test::random_bytes(kMegabyte, seed), received, kMegabyte, 15s));
  EXPECT_EQ(received, test::random_bytes(kMegabyte, seed + 1000));
  ::shutdown(client.fd(), SHUT_WR);
  EXPECT_EQ(test::wait_for_end(client.fd(), 5s), test::Ending::fin);
  emulator.stop();
  EXPECT_TRUE(server_ok.load());

  const LinkStats s = emulator.stats();
  EXPECT_EQ(s.connections_accepted, 1u);
  EXPECT_EQ(s.connections_active, 0u);
  EXPECT_EQ(s.bytes[upstream], kMegabyte + sizeof seed);
  EXPECT_EQ(s.bytes[downstream], kMegabyte);
  EXPECT_EQ(s.queued_bytes, 0u);
  EXPECT_EQ(s.stalls + s.drops + s.target_connect_failures, 0u);
}

TEST(Relay, SeveralConnectionsAtOnce) {
  constexpr int kConnections = 6;
  constexpr std::size_t kSize = 256 * 1024;
  std::atomic<int> servers_ok{0};
  test::TcpServer server([&](int fd) {
    std::uint64_t seed = 0;
    if (!test::recv_exact(fd, &seed, sizeof seed, 5s)) return;
    Bytes received;
    if (test::exchange(fd, test::random_bytes(kSize, seed + 1000), received, kSize, 15s) &&
        received == test::random_bytes(kSize, seed))
      servers_ok.fetch_add(1);
  });
  LinkEmulator emulator(LinkSpec{}, 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);

  std::vector<std::thread> clients;
  std::atomic<int> clients_ok{0};
  for (int i = 0; i < kConnections; ++i) {
    clients.emplace_back([&, i] {
      Socket client(test::connect_loopback(port));
      const std::uint64_t seed = 100 + static_cast<std::uint64_t>(i);
      Bytes received;
      if (test::send_all(client.fd(), &seed, sizeof seed, 5s) &&
          test::exchange(client.fd(), test::random_bytes(kSize, seed), received, kSize, 15s) &&
          received == test::random_bytes(kSize, seed + 1000))
        clients_ok.fetch_add(1);
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(clients_ok.load(), kConnections);
  // The servers finish their checks right after the last byte; give them a bounded moment.
  for (int i = 0; i < 100 && servers_ok.load() < kConnections; ++i)
    std::this_thread::sleep_for(20ms);
  EXPECT_EQ(servers_ok.load(), kConnections);
  EXPECT_EQ(emulator.stats().connections_accepted, static_cast<std::uint64_t>(kConnections));
}

TEST(Relay, HalfCloseIsRelayedAfterTheData) {
  // The client sends a request and closes its side; the server answers after reading to the
  // end, so the answer can only arrive if the FIN was relayed, and after the request's bytes.
  test::TcpServer server([](int fd) {
    std::string request;
    char buf[256];
    while (true) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      request.append(buf, static_cast<std::size_t>(n));
    }
    const std::string answer = "got " + std::to_string(request.size());
    (void)test::send_all(fd, answer.data(), answer.size(), 5s);
  });
  LinkSpec spec;
  spec.delay = 5ms;
  LinkEmulator emulator(spec, 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);

  Socket client(test::connect_loopback(port));
  const std::string request(1000, 'x');
  ASSERT_TRUE(test::send_all(client.fd(), request.data(), request.size(), 5s));
  ::shutdown(client.fd(), SHUT_WR);
  char answer[8] = {};
  ASSERT_TRUE(test::recv_exact(client.fd(), answer, 8, 5s));
  EXPECT_EQ(std::string(answer, 8), "got 1000");
  EXPECT_EQ(test::wait_for_end(client.fd(), 5s), test::Ending::fin);
}

TEST(Relay, TargetDownClosesTheClientAndTheEmulatorCarriesOn) {
  LinkEmulator emulator(LinkSpec{}, 1);
  const std::uint16_t port = start(emulator, test::closed_port());
  ASSERT_NE(port, 0);
  for (int i = 0; i < 3; ++i) {
    Socket client(test::connect_loopback(port));  // the emulator itself accepts
    const test::Ending end = test::wait_for_end(client.fd(), 5s);
    EXPECT_TRUE(end == test::Ending::reset || end == test::Ending::fin);
  }
  const LinkStats s = emulator.stats();
  EXPECT_EQ(s.connections_accepted, 3u);
  EXPECT_EQ(s.target_connect_failures, 3u);
  EXPECT_EQ(s.connections_active, 0u);
}

TEST(Relay, StopClosesOpenConnections) {
  test::TcpServer server(test::echo);
  LinkSpec spec;
  spec.delay = 1s;  // bytes are held when the stop comes
  LinkEmulator emulator(spec, 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket a(test::connect_loopback(port));
  Socket b(test::connect_loopback(port));
  ASSERT_TRUE(test::send_all(a.fd(), "held", 4, 1s));
  // Wait (bounded) until the emulator has both connections and holds the bytes.
  for (int i = 0; i < 200 && emulator.stats().queued_bytes < 4; ++i)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(emulator.stats().queued_bytes, 4u);
  const auto before = std::chrono::steady_clock::now();
  emulator.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);  // it did not wait for the delay
  EXPECT_NE(test::wait_for_end(a.fd(), 2s), test::Ending::timeout);
  EXPECT_NE(test::wait_for_end(b.fd(), 2s), test::Ending::timeout);
  EXPECT_EQ(emulator.stats().queued_bytes, 0u);
  EXPECT_EQ(emulator.stats().connections_active, 0u);
  emulator.stop();  // idempotent
}

TEST(Relay, StartErrors) {
  std::string error;
  LinkEmulator emulator(LinkSpec{}, 1);
  EXPECT_EQ(emulator.start("no-such-host.invalid", 0, "127.0.0.1", 1, error), 0);
  EXPECT_NE(error.find("listen"), std::string::npos) << error;
  EXPECT_EQ(emulator.start("127.0.0.1", 0, "no-such-host.invalid", 1, error), 0);
  EXPECT_NE(error.find("target"), std::string::npos) << error;

  LinkEmulator first(LinkSpec{}, 1);
  const std::uint16_t port = first.start("127.0.0.1", 0, "127.0.0.1", 1, error);
  ASSERT_NE(port, 0) << error;
  EXPECT_EQ(first.listen_address(), "127.0.0.1");
  EXPECT_EQ(first.start("127.0.0.1", 0, "127.0.0.1", 1, error), 0);
  EXPECT_NE(error.find("started before"), std::string::npos) << error;
  LinkEmulator second(LinkSpec{}, 1);
  EXPECT_EQ(second.start("127.0.0.1", port, "127.0.0.1", 1, error), 0);  // port taken
  EXPECT_NE(error.find("bind"), std::string::npos) << error;
}

TEST(Relay, StatsAndStopFromOtherThreads) {
  test::TcpServer server(test::echo);
  LinkEmulator emulator(LinkSpec{}, 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) (void)emulator.stats();
  });
  Socket client(test::connect_loopback(port));
  Bytes back;
  EXPECT_TRUE(test::exchange(client.fd(), Bytes(10000, 7), back, 10000, 5s));
  std::thread stopper([&] { emulator.stop(); });
  emulator.stop();
  stopper.join();
  done.store(true);
  reader.join();
  EXPECT_EQ(emulator.stats().bytes[upstream], 10000u);
}

}  // namespace
}  // namespace dsekp::linkemu
