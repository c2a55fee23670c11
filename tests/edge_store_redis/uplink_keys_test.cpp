// The Redis store's kept uplink sessions (edge/store/redis/redis_uplink_keys.hpp) on their own:
// only the uplink half of a session is copied, a rotated credential misses, the bound holds, and
// a window put back after a failed commit lands on its session only.
#include "edge/store/redis/redis_uplink_keys.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace dsekp::edge::redis {
namespace {

EdgeDeviceState state_with_sessions(std::initializer_list<std::uint16_t> sessctrs) {
  EdgeDeviceState state;
  for (const std::uint16_t sessctr : sessctrs) {
    EdgeSession& s = state.established[state.established_count++];
    s.sessctr = sessctr;
    std::array<std::uint8_t, 16> key{};
    key.fill(static_cast<std::uint8_t>(sessctr));
    s.keys.up.key = AeadKey::from(key);
    s.keys.down.key = AeadKey::from(key);
  }
  return state;
}

bool all_zero(ByteView bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

TEST(UplinkKeys, KeepsTheUplinkHalfOfEachSessionUnderItsCredentialGeneration) {
  UplinkKeys keys(8);
  const EdgeDeviceState state = state_with_sessions({7, 9});
  keys.put("dev2:{a}", state, {"t7", "t9"}, 3);
  UplinkKeys::Entry* e = keys.find("dev2:{a}", 9, 3);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->tag, "t9");
  EXPECT_TRUE(std::equal(e->session.keys.up.key.view().begin(), e->session.keys.up.key.view().end(),
                         state.established[1].keys.up.key.view().begin()));
  EXPECT_TRUE(all_zero(e->session.keys.down.key.view())) << "a downlink key was copied";
  EXPECT_EQ(keys.find("dev2:{a}", 9, 4), nullptr) << "found under another credential generation";
  EXPECT_EQ(keys.find("dev2:{a}", 8, 3), nullptr);
  EXPECT_EQ(keys.entry_of("dev2:{a}", e->session), e);
  EXPECT_EQ(keys.entry_of("dev2:{a}", state.established[1]), nullptr) << "not a kept session";
  // A state without established sessions drops the device.
  keys.put("dev2:{a}", EdgeDeviceState{}, {}, 3);
  EXPECT_EQ(keys.size(), 0u);
}

TEST(UplinkKeys, AnUntaggedSessionIsNotFoundAndTheBoundHolds) {
  UplinkKeys keys(2);
  keys.put("dev2:{a}", state_with_sessions({1}), {""}, 1);
  EXPECT_EQ(keys.find("dev2:{a}", 1, 1), nullptr);
  keys.put("dev2:{b}", state_with_sessions({1}), {"t"}, 1);
  keys.put("dev2:{c}", state_with_sessions({1}), {"t"}, 1);
  EXPECT_EQ(keys.size(), 2u);
  UplinkKeys none(0);
  EXPECT_FALSE(none.enabled());
  none.put("dev2:{a}", state_with_sessions({1}), {"t"}, 1);
  EXPECT_EQ(none.size(), 0u);
}

TEST(UplinkKeys, AWindowPutBackLandsOnItsSessionOnly) {
  UplinkKeys keys(8);
  keys.put("dev2:{a}", state_with_sessions({1, 2}), {"t1", "t2"}, 1);
  UplinkKeys::Entry* one = keys.find("dev2:{a}", 1, 1);
  UplinkKeys::Entry* two = keys.find("dev2:{a}", 2, 1);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  const ReplayWindow before = one->session.uplink_window;
  ASSERT_EQ(one->session.uplink_window.accept(5), Error::ok);
  ASSERT_EQ(two->session.uplink_window.accept(5), Error::ok);
  keys.put_back_window("dev2:{a}", 1, "t1", before);
  EXPECT_EQ(one->session.uplink_window.accept(5), Error::ok) << "the window was not put back";
  EXPECT_EQ(two->session.uplink_window.accept(5), Error::replay) << "the other session changed";
  keys.put_back_window("dev2:{a}", 2, "another tag", before);
  EXPECT_EQ(two->session.uplink_window.accept(5), Error::replay) << "put back under another tag";
}

}  // namespace
}  // namespace dsekp::edge::redis
