// Shared helpers of the session-store tests: a temporary directory, hand-built device states
// that use every field of the format, and a field-by-field comparison of two states.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include "dsekp/edge_session.hpp"

namespace dsekp::edge::testing {

/// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dsekp-store-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline DevId dev_id_of(const std::string& text) {
  DevId id;
  EXPECT_EQ(id.assign(text), Error::ok);
  return id;
}

/// Fills a fixed-size byte type with `seed`, `seed + 1`, ... so every field differs.
template <typename T>
T pattern(std::uint8_t seed) {
  std::array<std::uint8_t, T::size_bytes> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(seed + i);
  return T::from(bytes);
}

/// A session with distinct keys, a window of `window_size` that accepted `accepted` seqs.
inline EdgeSession make_session(std::uint16_t sessctr, std::uint32_t window_size,
                                std::initializer_list<std::uint32_t> accepted, std::uint8_t seed) {
  EdgeSession s;
  s.sessctr = sessctr;
  s.keys.up.key = pattern<AeadKey>(seed);
  s.keys.up.iv_base = pattern<IvBase>(static_cast<std::uint8_t>(seed + 0x20));
  s.keys.down.key = pattern<AeadKey>(static_cast<std::uint8_t>(seed + 0x40));
  s.keys.down.iv_base = pattern<IvBase>(static_cast<std::uint8_t>(seed + 0x60));
  s.uplink_window = ReplayWindow(window_size);
  for (std::uint32_t seq : accepted) EXPECT_EQ(s.uplink_window.accept(seq), Error::ok);
  s.downlink_seq = 7u + seed;
  s.created_ms = 1'764'460'800'000u + seed;
  s.last_seen_ms = 1'764'460'900'000u + seed;
  s.serial = 100u + seed;
  return s;
}

/// A state that uses every part of the format: a pending session, several established sessions
/// with windows of 1, 64, 65 and 1024 seqs, used and unused replay-cache slots, a used bucket.
inline EdgeDeviceState make_rich_state(const std::string& dev_id = "esp32-01") {
  EdgeDeviceState s;
  s.dev_id = dev_id_of(dev_id);
  s.compact_replies = true;
  s.has_pending = true;
  s.pending.init.dev_id = s.dev_id;
  s.pending.init.sessctr = 0xBEEF;
  s.pending.init.t = 1'764'460'800;
  s.pending.init.dev_nonce = pattern<DevNonce>(0x90);
  s.pending.init.proof = pattern<Proof>(0xA0);
  s.pending.edge_nonce = pattern<EdgeNonce>(0xB0);
  s.pending.ack_proof = pattern<Proof>(0xC0);
  s.pending.session = make_session(0xBEEF, 64, {}, 0x01);
  s.established[0] = make_session(1, 1, {5}, 0x02);
  s.established[1] = make_session(2, 64, {0, 1, 2, 40, 63}, 0x03);
  s.established[2] = make_session(3, 65, {3, 70, 100, 130}, 0x04);
  s.established[3] = make_session(4, 1024, {0, 500, 1000, 1500, 4'000'000'000u}, 0x05);
  s.established_count = 4;
  s.has_newest_init = true;
  s.newest_init_t = 1'764'460'800;
  s.next_session_serial = 42;
  for (std::size_t i : {0u, 3u, 31u}) {
    s.seen_inits.entries[i] = InitReplayCache::Entry{
        pattern<DevNonce>(static_cast<std::uint8_t>(i)), 1'764'461'100u + i, true};
  }
  s.seen_inits.next = 3;
  const TokenBucketConfig rate{8, 30'000};
  for (int i = 0; i < 3; ++i) (void)s.init_bucket.try_take(rate, 1'764'460'000'000u + 1000u * i);
  return s;
}

template <typename A, typename B>
bool same_bytes(const A& a, const B& b) {
  return std::ranges::equal(a.view(), b.view());
}

inline void expect_same_session(const EdgeSession& a, const EdgeSession& b) {
  EXPECT_EQ(a.sessctr, b.sessctr);
  EXPECT_TRUE(same_bytes(a.keys.up.key, b.keys.up.key));
  EXPECT_TRUE(same_bytes(a.keys.up.iv_base, b.keys.up.iv_base));
  EXPECT_TRUE(same_bytes(a.keys.down.key, b.keys.down.key));
  EXPECT_TRUE(same_bytes(a.keys.down.iv_base, b.keys.down.iv_base));
  EXPECT_EQ(a.uplink_window.size(), b.uplink_window.size());
  EXPECT_EQ(a.uplink_window.top(), b.uplink_window.top());
  EXPECT_EQ(a.uplink_window.bitmap(), b.uplink_window.bitmap());
  EXPECT_EQ(a.downlink_seq, b.downlink_seq);
  EXPECT_EQ(a.created_ms, b.created_ms);
  EXPECT_EQ(a.last_seen_ms, b.last_seen_ms);
  EXPECT_EQ(a.serial, b.serial);
}

/// Every field the core reads must be equal (unused replay-cache slots and session slots
/// beyond the count are not part of a state's meaning).
inline void expect_same_state(const EdgeDeviceState& a, const EdgeDeviceState& b) {
  EXPECT_EQ(a.dev_id.str(), b.dev_id.str());
  ASSERT_EQ(a.has_pending, b.has_pending);
  if (a.has_pending) {
    EXPECT_EQ(a.pending.init.dev_id.str(), b.pending.init.dev_id.str());
    EXPECT_EQ(a.pending.init.sessctr, b.pending.init.sessctr);
    EXPECT_EQ(a.pending.init.t, b.pending.init.t);
    EXPECT_TRUE(same_bytes(a.pending.init.dev_nonce, b.pending.init.dev_nonce));
    EXPECT_TRUE(same_bytes(a.pending.init.proof, b.pending.init.proof));
    EXPECT_TRUE(same_bytes(a.pending.edge_nonce, b.pending.edge_nonce));
    EXPECT_TRUE(same_bytes(a.pending.ack_proof, b.pending.ack_proof));
    expect_same_session(a.pending.session, b.pending.session);
  }
  ASSERT_EQ(a.established_count, b.established_count);
  for (std::uint32_t i = 0; i < a.established_count; ++i)
    expect_same_session(a.established[i], b.established[i]);
  EXPECT_EQ(a.has_newest_init, b.has_newest_init);
  EXPECT_EQ(a.newest_init_t, b.newest_init_t);
  EXPECT_EQ(a.next_session_serial, b.next_session_serial);
  EXPECT_EQ(a.compact_replies, b.compact_replies);
  EXPECT_EQ(a.seen_inits.next, b.seen_inits.next);
  for (std::size_t i = 0; i < kInitReplayCacheSize; ++i) {
    const auto& x = a.seen_inits.entries[i];
    const auto& y = b.seen_inits.entries[i];
    ASSERT_EQ(x.used, y.used) << "slot " << i;
    if (!x.used) continue;
    EXPECT_TRUE(same_bytes(x.dev_nonce, y.dev_nonce)) << "slot " << i;
    EXPECT_EQ(x.expires_s, y.expires_s) << "slot " << i;
  }
  EXPECT_EQ(a.init_bucket.state(), b.init_bucket.state());
  EXPECT_EQ(a.ratchet.active, b.ratchet.active);
  EXPECT_EQ(a.ratchet.epoch, b.ratchet.epoch);
  if (a.ratchet.active) {
    EXPECT_TRUE(same_bytes(a.ratchet.secret, b.ratchet.secret));
  }
  if (a.has_pending) {
    EXPECT_EQ(a.pending.ratchet_epoch, b.pending.ratchet_epoch);
  }
}

/// make_rich_state() of a device in ratchet mode (PROTOCOL.md 6.6): its pending session's INIT
/// verified under the current secret.
inline EdgeDeviceState make_ratcheting_state(const std::string& dev_id = "esp32-01") {
  EdgeDeviceState s = make_rich_state(dev_id);
  s.ratchet.active = true;
  s.ratchet.epoch = 7;
  s.ratchet.secret = pattern<DevSecret>(0xD0);
  s.pending.ratchet_epoch = 7;
  return s;
}

}  // namespace dsekp::edge::testing
