// A restarted edge, with the real protocol core on OpenSSL, picks up where it left off: a DATA
// frame it accepted before the restart is still a `replay`, new frames are accepted without a
// new handshake, a retransmitted INIT gets the same ACK, and downlink seqs (nonces) continue.
// Run with every change committed on its own and, as the daemon's batches do, inside a
// transaction under a savepoint (the store's write-back path, flushed at the commit).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"
#include "crypto/testing/seeded_rng.hpp"
#include "dsekp/device_session.hpp"
#include "edge/store/sqlite_session_store.hpp"
#include "store_test_support.hpp"

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

// One edge process: its store and its protocol object.
// Destroying it is the restart.
struct EdgeProcess {
  EdgeProcess(const std::string& path, const DeviceCredentials& c, CryptoBackend& crypto,
              bool in_batches)
      : batched(in_batches), edge(crypto, [&] {
          EdgeConfig config;
          config.edge_salt = c.edge_salt;
          return config;
        }()) {
    std::string error;
    sqlite = SqliteSessionStore::open(path, {}, error);
    EXPECT_NE(sqlite, nullptr) << error;
  }
  SessionStore& store() { return *sqlite; }

  // Opens what the daemon opens around one message of a batch (nothing when not batched).
  void begin_message() {
    if (!batched) return;
    EXPECT_TRUE(sqlite->begin().ok());
    EXPECT_TRUE(sqlite->savepoint().ok());
  }
  void end_message() {
    if (!batched) return;
    EXPECT_TRUE(sqlite->release_savepoint().ok());
    EXPECT_TRUE(sqlite->commit().ok());
  }

  // What the daemon does per DATA frame: load, open, and persist before anything else.
  Error receive(const DataFrame& frame, std::uint64_t now_ms) {
    begin_message();
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    EXPECT_TRUE(store().load(frame.dev_id, state, generation).ok());
    std::vector<std::uint8_t> plaintext(kMaxPayloadSize);
    DataOutcome out;
    const Error e = edge.open_data(frame, state, now_ms, plaintext, out);
    if (e == Error::ok) {
      EXPECT_TRUE(store().save(frame.dev_id, state, now_ms, generation).ok());
    }
    end_message();
    return e;
  }
  Error handle_init(const InitFrame& init, const DevSecret& secret, Rng& rng, InitOutcome& out) {
    begin_message();
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    EXPECT_TRUE(store().load(init.dev_id, state, generation).ok());
    const Error e = edge.handle_init(init, secret, state, kNowMs, rng, out);
    if (e == Error::ok) {
      EXPECT_TRUE(store().save(init.dev_id, state, kNowMs, generation).ok());
    }
    end_message();
    return e;
  }
  Error seal_downlink(const DevId& dev_id, DataFrame& out) {
    begin_message();
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    EXPECT_TRUE(store().load(dev_id, state, generation).ok());
    const std::uint8_t command[] = {'o', 'n'};
    const Error e = edge.seal_downlink(state, command, kNowMs, out);
    // Persisted before the frame may be published: its seq must never be used again.
    if (e == Error::ok) {
      EXPECT_TRUE(store().save(dev_id, state, kNowMs, generation).ok());
    }
    end_message();
    return e;
  }

  bool batched;
  EdgeProtocol edge;
  std::unique_ptr<SqliteSessionStore> sqlite;
};

class EdgeRestart : public ::testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<EdgeProcess> start_edge() {
    return std::make_unique<EdgeProcess>(dir_.file("edge.db"), credentials_, crypto_, GetParam());
  }
  DataFrame seal(std::uint64_t now_ms) {
    DataFrame f;
    const std::uint8_t reading[] = {'2', '4'};
    EXPECT_EQ(device_.seal(reading, now_ms, f), Error::ok);
    return f;
  }
  InitFrame handshake(EdgeProcess& edge) {
    InitFrame init;
    EXPECT_EQ(device_.start_handshake(kNowS, device_rng_, init), Error::ok);
    InitOutcome out;
    EXPECT_EQ(edge.handle_init(init, credentials_.dev_secret, edge_rng_, out), Error::ok);
    EXPECT_EQ(device_.handle_ack(out.ack), Error::ok);
    return init;
  }

  TempDir dir_;
  OpenSslCrypto crypto_;
  DeviceCredentials credentials_ = credentials();
  DeviceSession device_{crypto_, credentials_};
  SeededRng device_rng_{1};
  SeededRng edge_rng_{2};
};

TEST_P(EdgeRestart, AcceptedFramesStayRejectedAndNewOnesAreAccepted) {
  auto edge = start_edge();
  handshake(*edge);
  std::vector<DataFrame> sent;
  for (int i = 0; i < 5; ++i) sent.push_back(seal(kNowMs + 1000u * i));
  for (const DataFrame& f : sent) ASSERT_EQ(edge->receive(f, kNowMs + 5000), Error::ok);
  ASSERT_EQ(edge->receive(sent[2], kNowMs + 5000), Error::replay);

  edge = start_edge();  // restart: a new process state, the same database file
  for (const DataFrame& f : sent) EXPECT_EQ(edge->receive(f, kNowMs + 6000), Error::replay);
  const DataFrame next = seal(kNowMs + 7000);  // no new handshake
  EXPECT_EQ(edge->receive(next, kNowMs + 7000), Error::ok);

  edge = start_edge();
  EXPECT_EQ(edge->receive(next, kNowMs + 8000), Error::replay);
  EXPECT_EQ(edge->receive(seal(kNowMs + 8000), kNowMs + 8000), Error::ok);
}

TEST_P(EdgeRestart, FramesSkippedBeforeARestartAreStillAcceptedOnce) {
  auto edge = start_edge();
  handshake(*edge);
  const DataFrame late = seal(kNowMs);  // delayed in the network
  const DataFrame early = seal(kNowMs + 1000);
  ASSERT_EQ(edge->receive(early, kNowMs + 1000), Error::ok);
  edge = start_edge();
  EXPECT_EQ(edge->receive(late, kNowMs + 2000), Error::ok);  // inside the window, never seen
  edge = start_edge();
  EXPECT_EQ(edge->receive(late, kNowMs + 3000), Error::replay);
}

TEST_P(EdgeRestart, PendingSessionSurvives) {
  auto edge = start_edge();
  InitFrame init;
  ASSERT_EQ(device_.start_handshake(kNowS, device_rng_, init), Error::ok);
  InitOutcome first;
  ASSERT_EQ(edge->handle_init(init, credentials_.dev_secret, edge_rng_, first), Error::ok);

  edge = start_edge();  // the ACK was lost, and the edge restarted
  InitOutcome again;
  ASSERT_EQ(edge->handle_init(init, credentials_.dev_secret, edge_rng_, again), Error::ok);
  EXPECT_TRUE(again.retransmission);
  EXPECT_TRUE(again.ack.edge_nonce.equals(first.ack.edge_nonce));
  EXPECT_TRUE(again.ack.proof.equals(first.ack.proof));
  ASSERT_EQ(device_.handle_ack(again.ack), Error::ok);
  edge = start_edge();
  EXPECT_EQ(edge->receive(seal(kNowMs + 1000), kNowMs + 1000), Error::ok);  // confirms it
}

TEST_P(EdgeRestart, DownlinkSeqContinuesAcrossRestarts) {
  auto edge = start_edge();
  handshake(*edge);
  ASSERT_EQ(edge->receive(seal(kNowMs), kNowMs), Error::ok);
  DataFrame before;
  ASSERT_EQ(edge->seal_downlink(credentials_.dev_id, before), Error::ok);
  edge = start_edge();
  DataFrame after;
  ASSERT_EQ(edge->seal_downlink(credentials_.dev_id, after), Error::ok);
  EXPECT_EQ(before.seq, 0u);
  EXPECT_EQ(after.seq, 1u);  // not 0 again: a nonce is never reused
  std::vector<std::uint8_t> plaintext(kMaxPayloadSize);
  std::size_t n = 0;
  EXPECT_EQ(device_.open_downlink(before, plaintext, n), Error::ok);
  EXPECT_EQ(device_.open_downlink(after, plaintext, n), Error::ok);
}

TEST_P(EdgeRestart, ReplayedInitStaysRefused) {
  auto edge = start_edge();
  const InitFrame old_init = handshake(*edge);
  ASSERT_EQ(edge->receive(seal(kNowMs), kNowMs), Error::ok);  // confirms: no pending INIT now
  edge = start_edge();
  InitOutcome out;
  EXPECT_EQ(edge->handle_init(old_init, credentials_.dev_secret, edge_rng_, out),
            Error::superseded_init);
}

std::string store_name(const ::testing::TestParamInfo<bool>& param_info) {
  return param_info.param ? "in_batches" : "one_commit_each";
}

INSTANTIATE_TEST_SUITE_P(Store, EdgeRestart, ::testing::Values(false, true), store_name);

}  // namespace
}  // namespace dsekp::edge::testing
