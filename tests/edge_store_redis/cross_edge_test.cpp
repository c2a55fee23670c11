// Two edges (two EdgeProtocol objects, each with its own RedisSessionStore on one redis-server)
// and one device, with the real protocol core on OpenSSL: a session established through edge A
// is usable at edge B, a frame accepted by one is a replay at the other, and when both receive
// the same frame at once exactly one accepts it (the other's commit conflicts; its re-handling
// finds a replay).
#include <gtest/gtest.h>

#include "crypto/openssl/openssl_crypto.hpp"
#include "crypto/testing/seeded_rng.hpp"
#include "dsekp/device_session.hpp"
#include "store_backends.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr std::uint32_t kNowS = 1'764'460'800;
constexpr std::uint64_t kNowMs = std::uint64_t{kNowS} * 1000;

DeviceCredentials credentials() {
  DeviceCredentials c;
  EXPECT_EQ(c.dev_id.assign("esp32-01"), Error::ok);
  std::array<std::uint8_t, kDevSecretSize> secret{};
  secret.fill(0x11);
  c.dev_secret = DevSecret::from(secret);
  std::vector<std::uint8_t> salt(16, 0x5A);
  EXPECT_EQ(c.edge_salt.assign(salt), Error::ok);
  return c;
}

// One edge: its protocol object and its own connection to the shared store.
struct Edge {
  Edge(RedisBackend& backend, const DeviceCredentials& c, CryptoBackend& crypto)
      : protocol(crypto,
                 [&] {
                   EdgeConfig config;
                   config.edge_salt = c.edge_salt;
                   return config;
                 }()),
        store(backend.open_redis()) {}

  // Load and decide; the caller commits (so that two edges can interleave).
  Error open(const DataFrame& frame, EdgeDeviceState& state, std::uint64_t& generation) {
    EXPECT_TRUE(store->load(frame.dev_id, state, generation).ok());
    std::vector<std::uint8_t> plaintext(kMaxPayloadSize);
    DataOutcome out;
    return protocol.open_data(frame, state, kNowMs + 1000, plaintext, out);
  }
  StoreResult commit(const DevId& id, const EdgeDeviceState& state, std::uint64_t generation) {
    Transaction tx(*store);
    if (const StoreResult r = store->save(id, state, kNowMs, generation); !r.ok()) return r;
    return tx.commit();
  }
  // What EdgeService does: load, decide, commit; a failed commit is transient and the message
  // is handled again (here at once, at most 3 times).
  Error receive(const DataFrame& frame) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      EdgeDeviceState state;
      std::uint64_t generation = 0;
      const Error e = open(frame, state, generation);
      if (e != Error::ok) return e;
      if (commit(frame.dev_id, state, generation).ok()) return Error::ok;
    }
    ADD_FAILURE() << "commit kept failing";
    return Error::crypto_failure;  // not a protocol outcome: the test has failed already
  }

  EdgeProtocol protocol;
  std::unique_ptr<RedisSessionStore> store;
};

class CrossEdge : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RedisBackend::start_server(); }
  static void TearDownTestSuite() { RedisBackend::stop_server(); }

  void handshake(Edge& edge) {
    InitFrame init;
    ASSERT_EQ(device_.start_handshake(kNowS, device_rng_, init), Error::ok);
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    ASSERT_TRUE(edge.store->load(init.dev_id, state, generation).ok());
    InitOutcome out;
    ASSERT_EQ(
        edge.protocol.handle_init(init, credentials_.dev_secret, state, kNowMs, edge_rng_, out),
        Error::ok);
    ASSERT_TRUE(edge.commit(init.dev_id, state, generation).ok());
    ASSERT_EQ(device_.handle_ack(out.ack), Error::ok);
  }
  DataFrame seal(std::uint64_t now_ms) {
    DataFrame f;
    const std::uint8_t reading[] = {'2', '4'};
    EXPECT_EQ(device_.seal(reading, now_ms, f), Error::ok);
    return f;
  }

  RedisBackend backend_;
  OpenSslCrypto crypto_;
  DeviceCredentials credentials_ = credentials();
  DeviceSession device_{crypto_, credentials_};
  SeededRng device_rng_{1};
  SeededRng edge_rng_{2};
  Edge a_{backend_, credentials_, crypto_};
  Edge b_{backend_, credentials_, crypto_};
};

TEST_F(CrossEdge, ASessionFromEdgeAIsUsedAtEdgeBAndAcceptedFramesAreReplaysEverywhere) {
  handshake(a_);
  std::vector<DataFrame> sent;
  for (int i = 0; i < 6; ++i) sent.push_back(seal(kNowMs + 100u * i));
  for (int i = 0; i < 6; ++i) ASSERT_EQ((i % 2 == 0 ? a_ : b_).receive(sent[i]), Error::ok) << i;
  for (const DataFrame& f : sent) {
    EXPECT_EQ(a_.receive(f), Error::replay);
    EXPECT_EQ(b_.receive(f), Error::replay);
  }
}

TEST_F(CrossEdge, TheSameFrameAtBothEdgesAtOnceIsAcceptedExactlyOnce) {
  handshake(b_);
  const DataFrame frame = seal(kNowMs);
  EdgeDeviceState a_state, b_state;
  std::uint64_t a_gen = 0, b_gen = 0;
  // Both edges load the same state and both decide to accept (their windows agree).
  ASSERT_EQ(a_.open(frame, a_state, a_gen), Error::ok);
  ASSERT_EQ(b_.open(frame, b_state, b_gen), Error::ok);
  ASSERT_EQ(a_gen, b_gen);
  EXPECT_TRUE(a_.commit(frame.dev_id, a_state, a_gen).ok());
  EXPECT_EQ(b_.commit(frame.dev_id, b_state, b_gen).status, StoreStatus::generation_conflict);
  // B handles the message again: the frame is in the window now.
  EXPECT_EQ(b_.receive(frame), Error::replay);
  EXPECT_EQ(b_.receive(seal(kNowMs + 10)), Error::ok);
}

}  // namespace
}  // namespace dsekp::edge::testing
