// Redis Cluster hash slots (edge/store/redis/redis_key_slot.hpp) against the values and hash-tag
// rules of the Redis Cluster specification; redis_cluster_client_test.cpp also compares them
// with a real node's CLUSTER KEYSLOT.
#include <gtest/gtest.h>

#include <string>

#include "edge/store/redis/redis_key_slot.hpp"

namespace dsekp::edge::redis {
namespace {

TEST(KeySlot, MatchesTheSpecificationsCrc16AndKnownSlots) {
  // The specification's CRC16 check value: "123456789" -> 0x31C3.
  EXPECT_EQ(key_slot("123456789"), 0x31C3 % kClusterSlots);
  EXPECT_EQ(key_slot("foo"), 12182);  // CLUSTER KEYSLOT foo
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot(""), 0);
}

TEST(KeySlot, HashesOnlyANonEmptyHashTag) {
  EXPECT_EQ(hashed_part("{user1000}.following"), "user1000");
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(hashed_part("foo{}{bar}"), "foo{}{bar}");  // an empty tag: the whole key
  EXPECT_EQ(hashed_part("foo{{bar}}zap"), "{bar");     // up to the first '}' after the '{'
  EXPECT_EQ(hashed_part("foo{bar}{zap}"), "bar");      // the first tag only
  EXPECT_EQ(hashed_part("foo{bar"), "foo{bar");        // no closing brace: the whole key
  EXPECT_EQ(key_slot("dsekp:dev2:{dev-1}"), key_slot("dsekp:pending:{dev-1}:edge-a"));
}

TEST(KeySlot, EverySlotHasATagThatHashesToIt) {
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot)
    ASSERT_EQ(key_slot("pending:{" + std::string(slot_tag(static_cast<std::uint16_t>(slot))) +
                       "}:edge-a"),
              slot);
  EXPECT_EQ(slot_tag(key_slot("0")), "0");
}

}  // namespace
}  // namespace dsekp::edge::redis
