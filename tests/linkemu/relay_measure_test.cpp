// Measurements, not checks (DISABLED_ so ctest skips them): what the pure relay costs on
// loopback. Run with
//   linkemu_tests --gtest_also_run_disabled_tests --gtest_filter='LinkMeasure.*'
// It prints the round-trip p50/p99 of 64-byte ping-pongs direct and through the emulator, and
// one-way throughput direct and through the emulator.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "linkemu/link_emulator.hpp"
#include "tcp_peer.hpp"

namespace dsekp::linkemu {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::Bytes;

struct Percentiles {
  double p50_us = 0;
  double p99_us = 0;
};

Percentiles ping_pong(std::uint16_t port, int rounds) {
  test::Socket s(test::connect_loopback(port));
  Bytes message(64, 1);
  Bytes reply(64);
  std::vector<double> us;
  for (int i = 0; i < rounds + 200; ++i) {
    const auto t0 = Clock::now();
    EXPECT_TRUE(test::send_all(s.fd(), message, 5s));
    EXPECT_TRUE(test::recv_exact(s.fd(), reply.data(), reply.size(), 5s));
    if (i >= 200)  // warm-up excluded
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

double megabytes_per_second(std::uint16_t port, std::size_t total) {
  test::Socket s(test::connect_loopback(port));
  const Bytes block(256 * 1024, 7);
  const auto t0 = Clock::now();
  for (std::size_t sent = 0; sent < total; sent += block.size())
    EXPECT_TRUE(test::send_all(s.fd(), block, 10s));
  char ack = 0;
  EXPECT_TRUE(test::recv_exact(s.fd(), &ack, 1, 30s));  // the sink has every byte
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return static_cast<double>(total) / 1e6 / seconds;
}

std::uint16_t start(LinkEmulator& emulator, std::uint16_t target_port) {
  std::string error;
  const std::uint16_t port = emulator.start("127.0.0.1", 0, "127.0.0.1", target_port, error);
  EXPECT_NE(port, 0) << error;
  return port;
}

TEST(LinkMeasure, DISABLED_PureRelayLatency) {
  constexpr int kRounds = 5000;
  test::TcpServer server(test::echo);
  LinkEmulator emulator(LinkSpec{}, 1);
  const std::uint16_t port = start(emulator, server.port());
  const Percentiles direct = ping_pong(server.port(), kRounds);
  const Percentiles relayed = ping_pong(port, kRounds);
  std::printf(
      "64-byte ping-pong, %d rounds: direct p50 %.1f us p99 %.1f us; through the emulator p50 "
      "%.1f us p99 %.1f us; added per round trip (p50) %.1f us, per one-way hop %.1f us\n",
      kRounds, direct.p50_us, direct.p99_us, relayed.p50_us, relayed.p99_us,
      relayed.p50_us - direct.p50_us, (relayed.p50_us - direct.p50_us) / 2);
}

TEST(LinkMeasure, DISABLED_PureRelayThroughput) {
  constexpr std::size_t kTotal = std::size_t{512} << 20;
  test::TcpServer sink([](int fd) {
    std::vector<std::uint8_t> buf(256 * 1024);
    std::size_t got = 0;
    while (got < kTotal) {
      const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) return;
      got += static_cast<std::size_t>(n);
    }
    (void)test::send_all(fd, "k", 1, 5s);
  });
  LinkEmulator emulator(LinkSpec{}, 1);
  const std::uint16_t port = start(emulator, sink.port());
  const double direct = megabytes_per_second(sink.port(), kTotal);
  const double relayed = megabytes_per_second(port, kTotal);
  std::printf("one-way %zu MiB: direct %.0f MB/s, through the emulator %.0f MB/s\n", kTotal >> 20,
              direct, relayed);
}

}  // namespace
}  // namespace dsekp::linkemu
