// The working set's hash table, checked against std::unordered_map under random operations.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "edge/store/compact_state_map.hpp"

namespace dsekp::edge {
namespace {

std::vector<std::uint8_t> blob_of(std::size_t size, std::uint8_t fill) {
  return std::vector<std::uint8_t>(size, fill);
}

TEST(CompactStateMap, PutFindReplaceErase) {
  CompactStateMap map;
  EXPECT_FALSE(map.find("a").has_value());
  EXPECT_FALSE(map.erase("a"));
  ASSERT_TRUE(map.put("a", blob_of(10, 1), 1));
  ASSERT_TRUE(map.put("b", blob_of(20, 2), 5));
  auto a = map.find("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(std::vector<std::uint8_t>(a->blob.begin(), a->blob.end()), blob_of(10, 1));
  EXPECT_EQ(a->generation, 1u);
  ASSERT_TRUE(map.put("a", blob_of(10, 3), 2));  // same size: in place
  ASSERT_TRUE(map.put("b", blob_of(30, 4), 6));  // new size: new block
  EXPECT_EQ(map.size(), 2u);
  EXPECT_EQ(map.find("a")->blob[0], 3);
  EXPECT_EQ(map.find("b")->blob.size(), 30u);
  EXPECT_TRUE(map.erase("a"));
  EXPECT_FALSE(map.find("a").has_value());
  EXPECT_EQ(map.size(), 1u);
  map.clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_FALSE(map.find("b").has_value());
}

TEST(CompactStateMap, RefusesOutOfRangeSizes) {
  CompactStateMap map;
  EXPECT_FALSE(map.put("", blob_of(1, 0), 1));
  EXPECT_FALSE(map.put(std::string(256, 'k'), blob_of(1, 0), 1));
  EXPECT_FALSE(map.put("k", blob_of(CompactStateMap::kMaxBlobSize + 1, 0), 1));
  EXPECT_EQ(map.size(), 0u);
}

TEST(CompactStateMap, MatchesAReferenceMapUnderRandomOperations) {
  CompactStateMap map;
  std::unordered_map<std::string, std::pair<std::vector<std::uint8_t>, std::uint64_t>> reference;
  std::mt19937_64 rng(3);
  for (int step = 0; step < 200'000; ++step) {
    // Few distinct keys, so that inserts, replacements and erases all hit occupied runs.
    const std::string key = "dev-" + std::to_string(rng() % 3000);
    switch (rng() % 4) {
      case 0:
      case 1: {
        const auto blob = blob_of(1 + rng() % 200, static_cast<std::uint8_t>(rng()));
        const std::uint64_t generation = rng();
        ASSERT_TRUE(map.put(key, blob, generation));
        reference[key] = {blob, generation};
        break;
      }
      case 2:
        ASSERT_EQ(map.erase(key), reference.erase(key) == 1) << "step " << step;
        break;
      default: {
        const auto found = map.find(key);
        const auto it = reference.find(key);
        ASSERT_EQ(found.has_value(), it != reference.end()) << "step " << step;
        if (found) {
          ASSERT_EQ(std::vector<std::uint8_t>(found->blob.begin(), found->blob.end()),
                    it->second.first);
          ASSERT_EQ(found->generation, it->second.second);
        }
      }
    }
    ASSERT_EQ(map.size(), reference.size());
  }
  for (const auto& [key, value] : reference) ASSERT_TRUE(map.find(key).has_value()) << key;
  EXPECT_LE(map.size() * 5, map.slot_count() * 4);  // load factor at most 0.8
}

}  // namespace
}  // namespace dsekp::edge
