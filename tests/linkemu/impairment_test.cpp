// The emulator's impairments, each checked by a lower bound or a count, never by a speed:
// delay, order under heavy jitter, rate, drop (each mode), stall, bounded memory, and the
// run-time controls (set_spec, cut_connections) that fault injection uses.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "linkemu/link_emulator.hpp"
#include "tcp_peer.hpp"

namespace dsekp::linkemu {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::Bytes;
using test::Socket;

LinkSpec spec_of(const std::string& text) {
  const LinkSpecResult r = parse_link_spec(text);
  EXPECT_TRUE(r.ok()) << r.error;
  return r.spec.value_or(LinkSpec{});
}

std::uint16_t start(LinkEmulator& emulator, std::uint16_t target_port) {
  std::string error;
  const std::uint16_t port = emulator.start("127.0.0.1", 0, "127.0.0.1", target_port, error);
  EXPECT_NE(port, 0) << error;
  return port;
}

/// One small message to the echo server and back; the time it took, or a huge value on failure.
Clock::duration ping(int fd) {
  const auto t0 = Clock::now();
  char reply[4];
  if (!test::send_all(fd, "ping", 4, 5s) || !test::recv_exact(fd, reply, 4, 5s) ||
      std::memcmp(reply, "ping", 4) != 0)
    return std::chrono::hours(1);
  return Clock::now() - t0;
}

TEST(Impairment, DelayIsAppliedInEachDirection) {
  test::TcpServer server(test::echo);
  LinkEmulator emulator(spec_of("delay=50ms,jitter=0"), 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket client(test::connect_loopback(port));
  for (int i = 0; i < 3; ++i) {
    const Clock::duration rtt = ping(client.fd());
    EXPECT_GE(rtt, 100ms) << "round trip " << i;
    EXPECT_LT(rtt, 1h) << "round trip " << i << " failed";
  }
  const LinkStats s = emulator.stats();
  EXPECT_EQ(s.chunks_delayed[upstream], s.chunks[upstream]);
  EXPECT_EQ(s.chunks_delayed[downstream], s.chunks[downstream]);
  EXPECT_GE(s.held.chunks, 6u);
  EXPECT_GE(s.held.min_us, 50'000u);
  EXPECT_GE(s.held.mean_us(), 50'000.0);
}

TEST(Impairment, OrderIsPreservedUnderHeavyJitter) {
  constexpr std::uint32_t kMessages = 200;
  std::atomic<std::uint32_t> in_order{0};
  std::atomic<bool> out_of_order{false};
  test::TcpServer server([&](int fd) {
    for (std::uint32_t expected = 0; expected < kMessages; ++expected) {
      std::uint32_t seq = 0;
      if (!test::recv_exact(fd, &seq, sizeof seq, 10s)) return;
      if (seq != expected) {
        out_of_order = true;
        return;
      }
      in_order.fetch_add(1);
    }
  });
  // Jitter twice the delay: consecutive draws often differ by more than the gap between sends.
  LinkEmulator emulator(spec_of("delay=20ms,jitter=40ms"), 3);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket client(test::connect_loopback(port));
  for (std::uint32_t seq = 0; seq < kMessages; ++seq) {
    ASSERT_TRUE(test::send_all(client.fd(), &seq, sizeof seq, 5s));
    std::this_thread::sleep_for(500us);  // mostly one message per chunk
  }
  for (int i = 0; i < 500 && in_order.load() < kMessages && !out_of_order.load(); ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(out_of_order.load());
  EXPECT_EQ(in_order.load(), kMessages);
  const LinkStats s = emulator.stats();
  EXPECT_GE(s.chunks[upstream], 20u) << "the messages were not relayed as separate chunks";
  // Held times varied: jitter was applied (a 20 ms spread out of N(20ms, 40ms) cut at 0).
  EXPECT_GE(s.held.max_us - s.held.min_us, 20'000u);
}

TEST(Impairment, RateLimitsThroughput) {
  constexpr std::size_t kSize = 1 << 20;
  test::TcpServer server([](int fd) {
    Bytes data(kSize);
    if (test::recv_exact(fd, data.data(), kSize, 10s)) (void)test::send_all(fd, "k", 1, 5s);
  });
  LinkEmulator emulator(spec_of("rate=8mbit"), 1);  // 1,000,000 bytes per second
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket client(test::connect_loopback(port));
  const auto t0 = Clock::now();
  Bytes ack;
  ASSERT_TRUE(test::exchange(client.fd(), test::random_bytes(kSize, 1), ack, 1, 10s));
  EXPECT_GE(Clock::now() - t0, 900ms);  // 1 MiB at 1 MB/s: at least 1.048 s
  EXPECT_EQ(emulator.stats().bytes[upstream], kSize);
}

TEST(Impairment, DropOfEveryChunkResetsTheConnection) {
  std::atomic<int> server_endings{0};
  test::TcpServer server([&](int fd) {
    if (test::wait_for_end(fd, 5s) != test::Ending::timeout) server_endings.fetch_add(1);
  });
  LinkEmulator emulator(spec_of("drop=100%"), 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket client(test::connect_loopback(port));
  // Wait for the target connection first, so the drop closes a fully set-up relay.
  for (int i = 0; i < 200 && server.accepted() == 0; ++i) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(test::send_all(client.fd(), "x", 1, 1s));
  EXPECT_EQ(test::wait_for_end(client.fd(), 5s), test::Ending::reset);
  for (int i = 0; i < 200 && server_endings.load() == 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(server_endings.load(), 1);
  const LinkStats s = emulator.stats();
  EXPECT_EQ(s.drops, 1u);
  EXPECT_EQ(s.bytes[upstream], 0u);
  EXPECT_EQ(s.bytes_discarded[upstream], 1u);
  EXPECT_EQ(s.connections_active, 0u);
}

TEST(Impairment, DropModeFinEndsTheStream) {
  test::TcpServer server([](int fd) { (void)test::wait_for_end(fd, 5s); });
  LinkEmulator emulator(spec_of("drop=1,drop_mode=fin"), 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket client(test::connect_loopback(port));
  ASSERT_TRUE(test::send_all(client.fd(), "x", 1, 1s));
  EXPECT_EQ(test::wait_for_end(client.fd(), 5s), test::Ending::fin);
  EXPECT_EQ(emulator.stats().drops, 1u);
}

TEST(Impairment, DropModeBlackholeGoesSilentUntilAPeerCloses) {
  std::atomic<std::size_t> server_received{0};
  std::atomic<bool> server_saw_end{false};
  test::TcpServer server([&](int fd) {
    std::size_t received = 0;
    const test::Ending end = test::wait_for_end(fd, 5s, &received);
    server_received = received;
    server_saw_end = end == test::Ending::fin || end == test::Ending::reset;
  });
  LinkEmulator emulator(spec_of("drop=100%,drop_mode=blackhole"), 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  {
    Socket client(test::connect_loopback(port));
    ASSERT_TRUE(test::send_all(client.fd(), "lost", 4, 1s));
    ASSERT_TRUE(test::send_all(client.fd(), "also lost", 9, 1s));
    // Nothing comes back and the connection stays open.
    EXPECT_EQ(test::wait_for_end(client.fd(), 300ms), test::Ending::timeout);
  }  // the client gives up: the emulator closes the target side too
  for (int i = 0; i < 200 && !server_saw_end.load(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(server_saw_end.load());
  EXPECT_EQ(server_received.load(), 0u);
  const LinkStats s = emulator.stats();
  EXPECT_EQ(s.drops, 1u);
  EXPECT_EQ(s.bytes[upstream], 0u);
  EXPECT_EQ(s.bytes_discarded[upstream], 13u);
}

TEST(Impairment, StallAddsAtLeastTheStallTime) {
  test::TcpServer server(test::echo);
  LinkEmulator emulator(spec_of("stall=100%,stall_time=300ms"), 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket client(test::connect_loopback(port));
  const Clock::duration rtt = ping(client.fd());
  EXPECT_GE(rtt, 300ms);
  EXPECT_LT(rtt, 1h) << "the round trip failed";
  EXPECT_GE(emulator.stats().stalls, 1u);
}

TEST(Impairment, QueuedBytesStayUnderTheLimit) {
  // A fast sender against a slow link: the emulator must stop reading, not buffer without end.
  constexpr std::uint64_t kLimit = 64 * 1024;
  test::TcpServer server([](int fd) { (void)test::wait_for_end(fd, 5s); });  // reads and drops
  LinkEmulator emulator(spec_of("rate=1mbit,queue=64KiB"), 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket client(test::connect_loopback(port));
  const Bytes block(64 * 1024, 0x5a);
  std::uint64_t max_seen = 0;
  const auto until = Clock::now() + 700ms;
  while (Clock::now() < until) {
    (void)::send(client.fd(), block.data(), block.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    max_seen = std::max(max_seen, emulator.stats().queued_bytes);
    std::this_thread::sleep_for(1ms);
  }
  const LinkStats s = emulator.stats();
  EXPECT_LE(max_seen, kLimit);
  EXPECT_LE(s.peak_direction_queued_bytes, kLimit);
  EXPECT_GE(s.peak_direction_queued_bytes, kLimit / 2) << "the link never filled up";
  // 1 mbit/s for 0.7 s is ~87 kB: the rest waits in the kernel's buffers, not in ours.
  EXPECT_LE(s.bytes[upstream], 200'000u);
}

TEST(Impairment, QueuedBytesStayUnderTheLimitWhenTheReceiverDoesNotRead) {
  constexpr std::uint64_t kLimit = 32 * 1024;
  std::atomic<bool> release{false};
  test::TcpServer server([&](int fd) {
    for (int i = 0; i < 300 && !release.load(); ++i) std::this_thread::sleep_for(10ms);
    (void)test::wait_for_end(fd, 2s);
  });
  LinkEmulator emulator(spec_of("queue=32KiB"), 1);  // no impairment: only the receiver is slow
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket client(test::connect_loopback(port));
  const Bytes block(256 * 1024, 0x5a);
  std::uint64_t max_seen = 0;
  const auto until = Clock::now() + 500ms;
  while (Clock::now() < until) {
    (void)::send(client.fd(), block.data(), block.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    max_seen = std::max(max_seen, emulator.stats().queued_bytes);
    std::this_thread::sleep_for(1ms);
  }
  release = true;
  EXPECT_LE(max_seen, kLimit);
  EXPECT_LE(emulator.stats().peak_direction_queued_bytes, kLimit);
  EXPECT_GE(emulator.stats().peak_direction_queued_bytes, kLimit / 2);
}

TEST(Impairment, SetSpecAppliesToLaterChunks) {
  test::TcpServer server(test::echo);
  LinkEmulator emulator(LinkSpec{}, 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket client(test::connect_loopback(port));
  EXPECT_LT(ping(client.fd()), 1h);
  emulator.set_spec(spec_of("delay=40ms"));  // returns once the loop uses it
  EXPECT_GE(ping(client.fd()), 80ms);
  emulator.set_spec(LinkSpec{});
  EXPECT_LT(ping(client.fd()), 1h);
  EXPECT_GE(emulator.stats().held.max_us, 40'000u);
}

TEST(Impairment, CutConnectionsResetsEveryOpenConnection) {
  test::TcpServer server(test::echo);
  LinkEmulator emulator(LinkSpec{}, 1);
  const std::uint16_t port = start(emulator, server.port());
  ASSERT_NE(port, 0);
  Socket a(test::connect_loopback(port));
  Socket b(test::connect_loopback(port));
  ASSERT_LT(ping(a.fd()), 1h);
  ASSERT_LT(ping(b.fd()), 1h);
  emulator.cut_connections(DropMode::rst);
  EXPECT_EQ(test::wait_for_end(a.fd(), 2s), test::Ending::reset);
  EXPECT_EQ(test::wait_for_end(b.fd(), 2s), test::Ending::reset);
  EXPECT_EQ(emulator.stats().cuts, 2u);
  // The emulator itself carries on.
  Socket c(test::connect_loopback(port));
  EXPECT_LT(ping(c.fd()), 1h);
}

}  // namespace
}  // namespace dsekp::linkemu
