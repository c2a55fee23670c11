// EdgeDeviceState as the edge stores it: bound to one device, safe to move, safe to load from
// a corrupted row, and ordered by acceptance rather than by the (steppable) wall clock.
#include <gtest/gtest.h>

#include <type_traits>

#include "protocol_fixture.hpp"

namespace dsekp::testing {
namespace {

static_assert(!std::is_move_constructible_v<DeviceSession>,
              "a moved-from DeviceSession would seal under wiped keys");
static_assert(!std::is_copy_constructible_v<EdgeDeviceState>, "holds keys");

class EdgeState : public ::testing::Test {
 protected:
  EdgeState() : credentials_(make_credentials()), edge_(crypto_, make_edge_config(credentials_)) {}

  std::unique_ptr<DeviceSession> boot(EdgeDeviceState& state, std::uint64_t now_ms,
                                      const DeviceCredentials& c) {
    auto device = std::make_unique<DeviceSession>(crypto_, c);
    InitFrame init;
    EXPECT_EQ(device->start_handshake(static_cast<std::uint32_t>(now_ms / 1000), rng_, init),
              Error::ok);
    InitOutcome out;
    EXPECT_EQ(edge_.handle_init(init, c.dev_secret, state, now_ms, rng_, out), Error::ok);
    EXPECT_EQ(device->handle_ack(out.ack), Error::ok);
    return device;
  }
  Error send(DeviceSession& device, EdgeDeviceState& state, std::uint64_t now_ms = kNowMs) {
    DataFrame f;
    EXPECT_EQ(device.seal(ByteView(), now_ms, f), Error::ok);  // empty: a confirmation frame
    std::vector<std::uint8_t> pt(kMaxPayloadSize);
    DataOutcome out;
    return edge_.open_data(f, state, now_ms, pt, out);
  }

  OpenSslCrypto crypto_;
  SeededRng rng_{31};
  DeviceCredentials credentials_;
  EdgeProtocol edge_;
};

TEST_F(EdgeState, MovedFromStateHasNoSessions) {
  EdgeDeviceState state;
  auto device = boot(state, kNowMs, credentials_);
  ASSERT_EQ(send(*device, state), Error::ok);
  EdgeDeviceState moved = std::move(state);
  EXPECT_EQ(state.established_count, 0u);  // NOLINT(bugprone-use-after-move): the point
  EXPECT_FALSE(state.has_pending);
  EXPECT_EQ(send(*device, state), Error::unknown_session);  // not "opened" under a zero key
  EXPECT_EQ(send(*device, moved), Error::ok);
}

TEST_F(EdgeState, StateIsBoundToItsDevice) {
  EdgeDeviceState state;
  auto device = boot(state, kNowMs, credentials_);
  ASSERT_EQ(send(*device, state), Error::ok);
  EXPECT_EQ(state.dev_id.str(), "esp32-01");

  // Another genuine device whose INIT the caller wrongly pairs with this state.
  const DeviceCredentials other = make_credentials("esp32-02", 0x44);
  DeviceSession stranger(crypto_, other);
  InitFrame init;
  ASSERT_EQ(stranger.start_handshake(kNowS, rng_, init), Error::ok);
  InitOutcome out;
  EXPECT_EQ(edge_.handle_init(init, other.dev_secret, state, kNowMs, rng_, out),
            Error::dev_id_mismatch);
  EXPECT_FALSE(state.has_pending);

  EdgeDeviceState other_state;
  auto other_device = boot(other_state, kNowMs, other);
  ASSERT_EQ(send(*other_device, other_state), Error::ok);
  EXPECT_EQ(send(*other_device, state), Error::dev_id_mismatch);
}

TEST_F(EdgeState, CorruptedCountsFromStorageAreClamped) {
  EdgeDeviceState state;
  auto device = boot(state, kNowMs, credentials_);
  ASSERT_EQ(send(*device, state), Error::ok);
  state.established_count = 1000;  // as if read from a corrupted row
  state.seen_inits.next = 1000;
  EXPECT_EQ(send(*device, state), Error::ok);
  EXPECT_EQ(state.established_count, kMaxEstablishedSessions);
  DataFrame down;
  EXPECT_EQ(edge_.seal_downlink(state, as_bytes("x"), kNowMs, down), Error::ok);
  EdgeConfig config = make_edge_config(credentials_);
  config.max_skew_s = 0;  // FIFO mode uses seen_inits.next as an index
  EdgeProtocol clockless(crypto_, config);
  state.seen_inits.next = 1000;
  DeviceSession again(crypto_, credentials_);
  InitFrame init;
  ASSERT_EQ(again.start_handshake(kNowS + 1, rng_, init), Error::ok);
  InitOutcome out;
  EXPECT_EQ(clockless.handle_init(init, credentials_.dev_secret, state, kNowMs, rng_, out),
            Error::ok);
  EXPECT_LT(state.seen_inits.next, kInitReplayCacheSize);
}

TEST_F(EdgeState, NewestSessionIsByAcceptanceOrderNotWallClock) {
  EdgeDeviceState state;
  auto first = boot(state, kNowMs, credentials_);
  ASSERT_EQ(send(*first, state, kNowMs), Error::ok);
  // The edge's and the device's clocks step back an hour before the device's next session (an
  // NTP correction): the new session is accepted, and is the one downlink goes to.
  auto second = boot(state, kNowMs - 3'600'000, credentials_);
  ASSERT_EQ(send(*second, state, kNowMs - 3'600'000), Error::ok);
  DataFrame down;
  ASSERT_EQ(edge_.seal_downlink(state, as_bytes("on"), kNowMs, down), Error::ok);
  EXPECT_EQ(down.sessctr, second->sessctr());  // the live session, not the older one
  std::vector<std::uint8_t> pt(kMaxPayloadSize);
  std::size_t n = 0;
  EXPECT_EQ(second->open_downlink(down, pt, n), Error::ok);
}

TEST_F(EdgeState, ActuatorConfirmsItsSessionWithAnEmptyFrame) {
  // A device that only receives: after a rekey it must confirm the new session, or downlink
  // would keep going to the session it has already wiped.
  EdgeDeviceState state;
  auto device = boot(state, kNowMs, credentials_);
  EXPECT_TRUE(device->confirmation_pending());
  ASSERT_EQ(send(*device, state), Error::ok);
  EXPECT_FALSE(device->confirmation_pending());
  InitFrame init;
  ASSERT_EQ(device->start_handshake(kNowS + 1, rng_, init), Error::ok);
  InitOutcome out;
  ASSERT_EQ(edge_.handle_init(init, credentials_.dev_secret, state, kNowMs + 1000, rng_, out),
            Error::ok);
  ASSERT_EQ(device->handle_ack(out.ack), Error::ok);
  EXPECT_TRUE(device->confirmation_pending());
  DataFrame down;
  std::vector<std::uint8_t> pt(kMaxPayloadSize);
  std::size_t n = 0;
  ASSERT_EQ(edge_.seal_downlink(state, as_bytes("on"), kNowMs, down), Error::ok);
  EXPECT_EQ(device->open_downlink(down, pt, n), Error::unknown_session);  // old session: gone
  ASSERT_EQ(send(*device, state, kNowMs + 2000), Error::ok);              // the confirmation
  ASSERT_EQ(edge_.seal_downlink(state, as_bytes("on"), kNowMs, down), Error::ok);
  EXPECT_EQ(device->open_downlink(down, pt, n), Error::ok);
}

TEST_F(EdgeState, ZeroRefillIntervalMeansNoLimit) {
  TokenBucket bucket;
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(bucket.try_take({8, 0}, 0));
}

}  // namespace
}  // namespace dsekp::testing
