// The device-state encoding: every field round-trips, the layout is the documented one, and the
// decoder turns every truncation and every corrupted count or index into a named error.
#include <gtest/gtest.h>

#include <vector>

#include "edge/store/device_state_codec.hpp"
#include "store_test_support.hpp"

namespace dsekp::edge::testing {
namespace {

std::vector<std::uint8_t> encoded(const EdgeDeviceState& s) {
  std::vector<std::uint8_t> out;
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::ok);
  return out;
}

StateCodecError decode(const std::vector<std::uint8_t>& bytes) {
  EdgeDeviceState out;
  return decode_device_state(bytes, nullptr, out);
}

// Offsets in a state with dev_id "esp32-01" (8 bytes), see the layout in the header.
constexpr std::size_t kFlags = 2 + 8;
constexpr std::size_t kEstablishedCount = kFlags + 1 + 4 + 4;
constexpr std::size_t kBucketTokens = kEstablishedCount + 1;
constexpr std::size_t kCacheNext = kBucketTokens + 4 + 8;
constexpr std::size_t kAfterCache = kCacheNext + 1 + 4;

TEST(DeviceStateCodec, RoundTripsEveryField) {
  const EdgeDeviceState original = make_rich_state();
  const auto bytes = encoded(original);
  EdgeDeviceState decoded;
  ASSERT_EQ(decode_device_state(bytes, nullptr, decoded), StateCodecError::ok);
  expect_same_state(original, decoded);
  EXPECT_EQ(encoded(decoded), bytes);  // canonical: one state, one encoding
}

TEST(DeviceStateCodec, ARatchetingStateRoundTripsAndOnlyItCarriesTheSecret) {
  const EdgeDeviceState original = make_ratcheting_state();
  const auto bytes = encoded(original);
  EXPECT_EQ(bytes.size(), encoded(make_rich_state()).size() + 4 + kDevSecretSize + 4);
  EXPECT_EQ(bytes[kFlags] & 0x10, 0x10);
  EXPECT_EQ(encoded(make_rich_state())[kFlags] & 0x10, 0) << "a v1 state is encoded as before";
  EdgeDeviceState decoded;
  ASSERT_EQ(decode_device_state(bytes, nullptr, decoded), StateCodecError::ok);
  expect_same_state(original, decoded);
  EXPECT_EQ(encoded(decoded), bytes);
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_NE(decode(std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + n)),
              StateCodecError::ok)
        << n;
}

TEST(DeviceStateCodec, RatchetFieldsThatContradictEachOtherAreRefused) {
  std::vector<std::uint8_t> out;
  EdgeDeviceState s = make_ratcheting_state();
  s.pending.ratchet_epoch = 8;  // a pending INIT under a secret the state does not have yet
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::inconsistent_state);
  s.pending.ratchet_epoch = 6;  // ...or under one the state stepped past: confirming it would
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::inconsistent_state);  // step again
  s = make_rich_state();
  s.ratchet.epoch = 3;  // an epoch without the ratchet
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::inconsistent_state);
  s = EdgeDeviceState{};
  s.ratchet.active = true;  // a secret that belongs to no device
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::inconsistent_state);

  // The same contradictions written by hand are refused by the decoder.
  auto bytes = encoded(make_ratcheting_state());
  const std::size_t pending_epoch = bytes.size() - 4;
  bytes[pending_epoch + 3] = 8;
  EXPECT_EQ(decode(bytes), StateCodecError::inconsistent_state);
  bytes[pending_epoch + 3] = 6;
  EXPECT_EQ(decode(bytes), StateCodecError::inconsistent_state);
  EdgeDeviceState no_pending = make_ratcheting_state();
  no_pending.has_pending = false;
  no_pending.pending = PendingSession{};
  bytes = encoded(no_pending);
  bytes[bytes.size() - 1] = 1;  // a pending epoch without a pending session
  EXPECT_EQ(decode(bytes), StateCodecError::inconsistent_state);
}

TEST(DeviceStateCodec, FreshStateRoundTrips) {
  const EdgeDeviceState fresh;
  const auto bytes = encoded(fresh);
  EXPECT_EQ(bytes.size(), 2u + 1 + 4 + 4 + 1 + 4 + 8 + 1 + 4);
  EdgeDeviceState decoded = make_rich_state();
  ASSERT_EQ(decode_device_state(bytes, nullptr, decoded), StateCodecError::ok);
  expect_same_state(fresh, decoded);
}

TEST(DeviceStateCodec, LayoutIsTheDocumentedOne) {
  EdgeDeviceState s;
  s.dev_id = dev_id_of("d1");
  s.established[0] = make_session(0x0102, 64, {0}, 0x10);
  s.established_count = 1;
  s.has_newest_init = true;
  s.newest_init_t = 0x0A0B0C0D;
  s.next_session_serial = 1;
  const auto b = encoded(s);
  // clang-format off
  const std::vector<std::uint8_t> head = {
      1,    2,    'd',  '1',                    // version, dev_id
      0x02,                                     // flags: newest INIT only
      0x0A, 0x0B, 0x0C, 0x0D, 0,    0, 0, 1,    // newest_init_t, next_session_serial
      1,                                        // established_count
      0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 0, 0,  // bucket (never used)
      0,    0,    0,    0,    0,                // replay cache: next, empty mask
      0x01, 0x02,                               // session: sessctr
  };
  // clang-format on
  ASSERT_GE(b.size(), head.size());
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin(), b.begin() + head.size()), head);
  // A 64-seq window stores one bitmap word: 2 + 56 keys + 2 + 8 + 8 + 8 + 8 + 8 + 4 = 104.
  EXPECT_EQ(b.size(), head.size() - 2 + 104);
  const std::size_t window = head.size() + 56;
  EXPECT_EQ(b[window], 0);
  EXPECT_EQ(b[window + 1], 64);  // size
  EXPECT_EQ(b[window + 9], 1);   // top = 1
  EXPECT_EQ(b[window + 17], 1);  // bit 0: seq 0 accepted
}

TEST(DeviceStateCodec, TypicalStateIsSmall) {
  // One established session (64-seq window) and one replay-cache entry: what a device has
  // after a handshake and its first frame.
  EdgeDeviceState s;
  s.dev_id = dev_id_of("sensor-000001");
  s.established[0] = make_session(9, 64, {0}, 1);
  s.established_count = 1;
  s.seen_inits.entries[0] = InitReplayCache::Entry{pattern<DevNonce>(1), 100, true};
  EXPECT_EQ(encoded(s).size(), 29u + 13 + 20 + 104);
}

TEST(DeviceStateCodec, EveryTruncationIsRefused) {
  const auto bytes = encoded(make_rich_state());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<std::uint8_t> prefix(bytes.begin(), bytes.begin() + n);
    EXPECT_EQ(decode(prefix), StateCodecError::truncated) << "length " << n;
  }
}

TEST(DeviceStateCodec, TrailingBytesAreRefused) {
  auto bytes = encoded(make_rich_state());
  bytes.push_back(0);
  EXPECT_EQ(decode(bytes), StateCodecError::trailing_bytes);
}

TEST(DeviceStateCodec, FailedDecodeLeavesTheOutputAlone) {
  const EdgeDeviceState original = make_rich_state();
  EdgeDeviceState out = make_rich_state();
  auto bytes = encoded(EdgeDeviceState{});
  bytes[0] = 9;
  EXPECT_EQ(decode_device_state(bytes, nullptr, out), StateCodecError::unsupported_version);
  expect_same_state(original, out);
}

struct Corruption {
  const char* name;
  std::size_t offset;
  std::uint8_t value;
  StateCodecError expected;
};

class CorruptedField : public ::testing::TestWithParam<Corruption> {};

std::string corruption_name(const ::testing::TestParamInfo<Corruption>& param_info) {
  return param_info.param.name;
}

TEST_P(CorruptedField, IsANamedError) {
  auto bytes = encoded(make_rich_state());
  bytes.at(GetParam().offset) = GetParam().value;
  EXPECT_EQ(decode(bytes), GetParam().expected);
}

// Offsets into make_rich_state()'s encoding: 3 used cache slots, then the pending INIT (62
// bytes) and its session (2 + 56 keys, then the window size at +58).
constexpr std::size_t kPendingSession = kAfterCache + 3 * 20 + 62;
constexpr std::size_t kPendingWindow = kPendingSession + 58;

INSTANTIATE_TEST_SUITE_P(
    DeviceStateCodec, CorruptedField,
    ::testing::Values(
        Corruption{"version", 0, 2, StateCodecError::unsupported_version},
        Corruption{"dev_id_length", 1, 65, StateCodecError::bad_dev_id},
        Corruption{"dev_id_char", 2, '/', StateCodecError::bad_dev_id},
        Corruption{"unknown_flag", kFlags, 0x2F, StateCodecError::bad_flags},
        Corruption{"established_9", kEstablishedCount, 9, StateCodecError::too_many_sessions},
        Corruption{"established_255", kEstablishedCount, 255, StateCodecError::too_many_sessions},
        Corruption{"cache_next_32", kCacheNext, 32, StateCodecError::bad_replay_cache},
        Corruption{"cache_next_255", kCacheNext, 255, StateCodecError::bad_replay_cache},
        Corruption{"window_size_0", kPendingWindow + 1, 0, StateCodecError::bad_replay_window},
        Corruption{"window_size_over_1024", kPendingWindow, 0x04,
                   StateCodecError::bad_replay_window},
        Corruption{"window_size_huge", kPendingWindow, 0xFF, StateCodecError::bad_replay_window},
        Corruption{"window_top_huge", kPendingWindow + 2, 1, StateCodecError::bad_replay_window},
        Corruption{"window_bit_below_0", kPendingWindow + 10, 0x80,
                   StateCodecError::bad_replay_window},
        Corruption{"pending_sessctr", kPendingSession, 0, StateCodecError::inconsistent_state},
        Corruption{"downlink_seq_huge", kPendingWindow + 10 + 8, 1, StateCodecError::bad_seq}),
    corruption_name);

TEST(DeviceStateCodec, BucketFieldsWithoutTheirFlagAreRefused) {
  auto bytes = encoded(EdgeDeviceState{});
  // No dev_id: every offset is 8 bytes smaller. Tokens = 1 although the bucket flag is clear.
  bytes[kBucketTokens - 8 + 3] = 1;
  EXPECT_EQ(decode(bytes), StateCodecError::bad_flags);
}

TEST(DeviceStateCodec, SessionsWithoutADevIdAreRefused) {
  EdgeDeviceState s = make_rich_state();
  s.dev_id = DevId{};
  std::vector<std::uint8_t> out;
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::inconsistent_state);
  EXPECT_TRUE(out.empty());
  // The same state built by hand: drop the dev_id from a valid encoding.
  auto bytes = encoded(make_rich_state());
  bytes.erase(bytes.begin() + 2, bytes.begin() + 10);
  bytes[1] = 0;
  EXPECT_EQ(decode(bytes), StateCodecError::inconsistent_state);
}

TEST(DeviceStateCodec, StateOfAnotherDeviceIsRefusedWhenAsked) {
  const auto bytes = encoded(make_rich_state("esp32-01"));
  EdgeDeviceState out;
  const DevId other = dev_id_of("esp32-02");
  const DevId same = dev_id_of("esp32-01");
  EXPECT_EQ(decode_device_state(bytes, &other, out), StateCodecError::dev_id_mismatch);
  EXPECT_EQ(decode_device_state(bytes, &same, out), StateCodecError::ok);
}

TEST(DeviceStateCodec, EncoderRefusesWhatTheDecoderWould) {
  EdgeDeviceState s = make_rich_state();
  s.established_count = 9;
  std::vector<std::uint8_t> out;
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::too_many_sessions);
  s = make_rich_state();
  s.seen_inits.next = 32;
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::bad_replay_cache);
  s = make_rich_state();
  s.established[1].downlink_seq = (std::uint64_t{1} << 32) + 1;
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::bad_seq);
  s = make_rich_state();
  s.pending.init.dev_id = dev_id_of("someone-else");
  EXPECT_EQ(encode_device_state(s, out), StateCodecError::inconsistent_state);
}

// Every single-byte corruption either decodes to some valid state or fails with a named error:
// never a crash, never an out-of-range count (run under ASan/UBSan to check the memory side).
TEST(DeviceStateCodec, EveryByteFlipIsSafe) {
  const auto bytes = encoded(make_rich_state());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (const std::uint8_t flip : {std::uint8_t{0x01}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
      auto mutated = bytes;
      mutated[i] ^= flip;
      EdgeDeviceState out;
      if (decode_device_state(mutated, nullptr, out) == StateCodecError::ok) {
        EXPECT_LE(out.established_count, kMaxEstablishedSessions);
        std::vector<std::uint8_t> again;
        EXPECT_EQ(encode_device_state(out, again), StateCodecError::ok) << "byte " << i;
      }
    }
  }
}

TEST(DeviceStateCodec, ErrorNamesAreStable) {
  EXPECT_STREQ(state_codec_error_name(StateCodecError::truncated), "truncated");
  EXPECT_STREQ(state_codec_error_name(StateCodecError::too_many_sessions), "too_many_sessions");
  EXPECT_STREQ(state_codec_error_name(StateCodecError::inconsistent_state), "inconsistent_state");
}

}  // namespace
}  // namespace dsekp::edge::testing
