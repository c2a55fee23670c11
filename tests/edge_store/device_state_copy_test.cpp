// copy_device_state: a copy holds every field of the original, keys included, and nothing of
// what the destination held before (an older state with more sessions). clear_device_state: a
// reused state is as good as a new one.
#include <gtest/gtest.h>

#include "edge/store/device_state_codec.hpp"
#include "edge/store/device_state_copy.hpp"
#include "store_test_support.hpp"

namespace dsekp::edge::testing {
namespace {

/// Copies `original` and checks that the copy has every field and encodes byte for byte the same:
/// the same state as far as any store can tell.
void expect_copied(const EdgeDeviceState& original) {
  EdgeDeviceState copy;
  copy_device_state(original, copy);
  expect_same_state(original, copy);
  std::vector<std::uint8_t> a, b;
  ASSERT_EQ(encode_device_state(original, a), StateCodecError::ok);
  ASSERT_EQ(encode_device_state(copy, b), StateCodecError::ok);
  EXPECT_EQ(a, b);
}

TEST(DeviceStateCopy, CopiesEveryFieldAndKeepsNothingOfTheDestination) {
  const EdgeDeviceState original = make_rich_state();
  expect_copied(original);

  EdgeDeviceState smaller;
  smaller.dev_id = original.dev_id;
  EdgeDeviceState into = make_rich_state();
  copy_device_state(smaller, into);
  EXPECT_FALSE(into.has_pending);
  EXPECT_EQ(into.established_count, 0u);
  for (const EdgeSession& s : into.established) {
    for (const std::uint8_t byte : s.keys.up.key.view()) EXPECT_EQ(byte, 0) << "a key was left";
  }
}

// The ratchet's secret (PROTOCOL.md 6.6) is part of the copy, and a copy of a state without the
// ratchet over one with it leaves no secret behind.
TEST(DeviceStateCopy, CopiesTheRatchetAndLeavesNoSecretBehind) {
  expect_copied(make_ratcheting_state());

  EdgeDeviceState into = make_ratcheting_state();
  copy_device_state(make_rich_state(), into);
  EXPECT_FALSE(into.ratchet.active);
  EXPECT_EQ(into.ratchet.epoch, 0u);
  EXPECT_EQ(into.pending.ratchet_epoch, 0u);
  for (const std::uint8_t byte : into.ratchet.secret.view())
    EXPECT_EQ(byte, 0) << "a secret was left";
}

// The edge's DATA path reuses one state object for every frame: cleared, it must be a
// default-constructed state in every field and hold no key of the device before.
TEST(DeviceStateCopy, AClearedStateIsANewOneWithNoKeyLeft) {
  for (const auto make : {&make_rich_state, &make_ratcheting_state}) {
    EdgeDeviceState used = make("esp32-01");
    clear_device_state(used);
    const EdgeDeviceState fresh;
    expect_same_state(fresh, used);
    std::vector<std::uint8_t> a, b;
    ASSERT_EQ(encode_device_state(fresh, a), StateCodecError::ok);
    ASSERT_EQ(encode_device_state(used, b), StateCodecError::ok);
    EXPECT_EQ(a, b);
    const auto no_key = [](const EdgeSession& s) {
      for (const ByteView key :
           {ByteView(s.keys.up.key.view()), ByteView(s.keys.up.iv_base.view()),
            ByteView(s.keys.down.key.view()), ByteView(s.keys.down.iv_base.view())})
        for (const std::uint8_t byte : key) EXPECT_EQ(byte, 0) << "a key was left";
    };
    for (const EdgeSession& s : used.established) no_key(s);
    no_key(used.pending.session);
    for (const std::uint8_t byte : used.ratchet.secret.view())
      EXPECT_EQ(byte, 0) << "a secret was left";
  }
}

}  // namespace
}  // namespace dsekp::edge::testing
