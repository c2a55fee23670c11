// The TLS tunnel to Redis that docs/SCALING.md describes for edges on other hosts (Debian's
// hiredis 0.14 has no TLS): stunnel in client mode next to the edge, stunnel in server mode next
// to Redis. The store works through the pair with its ACL user, and what crosses the hop between
// the two stunnels is TLS: a plain Redis client there gets no answer, and a stunnel client that
// does not trust the server's certificate is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "edge/store/redis/redis_session_store.hpp"
#include "engines/redis_server.hpp"
#include "store_backends.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/loopback_port.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

using std::chrono::milliseconds;

bool wait_for_port(int port) {
  for (int i = 0; i < 100; ++i) {
    if (test::accepts_connections(port)) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return false;
}

// One stunnel in the foreground with a config of its own; killed with the test.
std::unique_ptr<test::ChildProcess> start_stunnel(const test::TempDir& dir, const std::string& name,
                                                  const std::string& service) {
  const std::string conf = dir.file(name + ".conf");
  std::ofstream(conf) << "foreground = yes\npid =\nsyslog = no\ndebug = 4\n" << service;
  return std::make_unique<test::ChildProcess>(std::vector<std::string>{DSEKP_STUNNEL_PATH, conf},
                                              dir.file(name + ".out"), dir.file(name + ".err"));
}

// What a plain (non-TLS) Redis client gets back from `port` for a PING: empty if nothing.
std::string plain_ping(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in addr = test::loopback_address(port);
  std::string reply;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    const timeval timeout{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const std::string ping = "*1\r\n$4\r\nPING\r\n";
    if (::send(fd, ping.data(), ping.size(), 0) == static_cast<ssize_t>(ping.size())) {
      char buf[64];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) reply.assign(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return reply;
}

TEST(RedisTlsTunnel, TheStoreWorksThroughAStunnelPairAndTheHopIsTls) {
  test::TempDir dir;
  std::ofstream(dir.file("users.acl")) << "user default on nopass ~* &* -@all +ping\n"
                                          "user edge-1 on >tunnel-pw ~tls:* &* +@all\n";
  engines::RedisServer redis(dir.path().string(), {"--aclfile", dir.file("users.acl")});
  // The server's certificate (self-signed, for the name the client checks), and another one
  // that a misconfigured client trusts instead.
  for (const std::string name : {"redis", "other"}) {
    const auto cert = test::run_command(
        {DSEKP_OPENSSL_PATH, "req", "-x509", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", dir.file(name + ".key"), "-out",
         dir.file(name + ".crt"), "-days", "1", "-subj", "/CN=" + name + ".internal"},
        dir.path().string());
    ASSERT_EQ(cert.exit_code, 0) << cert.err;
  }
  const int tls_port = test::free_loopback_port();
  const int client_port = test::free_loopback_port();
  auto server = start_stunnel(dir, "server",
                              "[redis]\naccept = 127.0.0.1:" + std::to_string(tls_port) +
                                  "\nconnect = 127.0.0.1:" + std::to_string(redis.port()) +
                                  "\ncert = " + dir.file("redis.crt") +
                                  "\nkey = " + dir.file("redis.key") + "\n");
  auto client =
      start_stunnel(dir, "client",
                    "[redis]\nclient = yes\naccept = 127.0.0.1:" + std::to_string(client_port) +
                        "\nconnect = 127.0.0.1:" + std::to_string(tls_port) +
                        "\nverifyChain = yes\nCAfile = " + dir.file("redis.crt") +
                        "\ncheckHost = redis.internal\n");
  ASSERT_TRUE(wait_for_port(tls_port)) << test::read_file(dir.file("server.err"));
  ASSERT_TRUE(wait_for_port(client_port)) << test::read_file(dir.file("client.err"));

  RedisStoreOptions o;
  o.endpoint.port = client_port;
  o.endpoint.username = "edge-1";
  o.endpoint.password = "tunnel-pw";
  o.prefix = "tls:";
  std::string error;
  auto store = RedisSessionStore::open(o, error);
  ASSERT_NE(store, nullptr) << error << test::read_file(dir.file("client.err"))
                            << test::read_file(dir.file("server.err"));
  const DevId id = dev_id_of("esp32-01");
  std::uint64_t generation = kAbsentGeneration;
  ASSERT_TRUE(store->save(id, make_rich_state(), 1, generation).ok()) << store->last_error();
  EdgeDeviceState back;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(store->load(id, back, loaded).ok());
  expect_same_state(make_rich_state(), back);

  // The hop between the stunnels speaks TLS only: Redis's own protocol gets nothing back there.
  EXPECT_EQ(plain_ping(redis.port()), "+PONG\r\n") << "the check itself works";
  EXPECT_EQ(plain_ping(tls_port).find("PONG"), std::string::npos);
  // A tunnel client that does not trust the server's certificate never gets through.
  const int untrusting_port = test::free_loopback_port();
  auto untrusting =
      start_stunnel(dir, "untrusting",
                    "[redis]\nclient = yes\naccept = 127.0.0.1:" + std::to_string(untrusting_port) +
                        "\nconnect = 127.0.0.1:" + std::to_string(tls_port) +
                        "\nverifyChain = yes\nCAfile = " + dir.file("other.crt") + "\n");
  ASSERT_TRUE(wait_for_port(untrusting_port));
  EXPECT_EQ(RedisSessionStore::open(
                [&] {
                  RedisStoreOptions u = o;
                  u.endpoint.port = untrusting_port;
                  return u;
                }(),
                error),
            nullptr);
}

}  // namespace
}  // namespace dsekp::edge::testing
