// The working set in front of SQLite: it serves what was saved, follows commits and rollbacks
// of the backing store, and drops a device another writer has changed.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "edge/store/cached_session_store.hpp"
#include "edge/store/sqlite_session_store.hpp"
#include "store_test_support.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr std::uint64_t kNow = 1'764'460'800'000;

class CachedStore : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteSessionStore> open_sqlite() {
    std::string error;
    auto store = SqliteSessionStore::open(dir_.file("edge.db"), {}, error);
    EXPECT_NE(store, nullptr) << error;
    return store;
  }
  // A state that differs from make_rich_state() in one replay window.
  static EdgeDeviceState newer_state() {
    EdgeDeviceState s = make_rich_state();
    EXPECT_EQ(s.established[1].uplink_window.accept(64), Error::ok);
    return s;
  }

  TempDir dir_;
  std::unique_ptr<SqliteSessionStore> sqlite_ = open_sqlite();
  CachedSessionStore cached_{*sqlite_};
  DevId id_ = dev_id_of("esp32-01");
};

TEST_F(CachedStore, ServesSavedStatesFromMemory) {
  const EdgeDeviceState state = make_rich_state();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(cached_.save(id_, state, kNow, generation).ok());
  ASSERT_TRUE(cached_.working_set().find(id_.str()).has_value());
  // Delete the row behind the cache's back: the load is served from memory.
  ASSERT_EQ(
      sqlite3_exec(sqlite_->connection(), "DELETE FROM device_state", nullptr, nullptr, nullptr),
      SQLITE_OK);
  EdgeDeviceState out;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(cached_.load(id_, out, loaded).ok());
  EXPECT_EQ(loaded, 1u);
  expect_same_state(state, out);
}

TEST_F(CachedStore, LoadsFromTheBackingStoreOnceThenFromMemory) {
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(sqlite_->save(id_, make_rich_state(), kNow, generation).ok());
  EXPECT_FALSE(cached_.working_set().find(id_.str()).has_value());
  EdgeDeviceState out;
  ASSERT_TRUE(cached_.load(id_, out, generation).ok());
  EXPECT_TRUE(cached_.working_set().find(id_.str()).has_value());
  expect_same_state(make_rich_state(), out);
}

TEST_F(CachedStore, RollbackKeepsTheCommittedState) {
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(cached_.save(id_, make_rich_state(), kNow, generation).ok());
  {
    Transaction tx(cached_);
    ASSERT_TRUE(tx.status().ok());
    ASSERT_TRUE(cached_.save(id_, newer_state(), kNow + 1, generation).ok());
    EdgeDeviceState inside;
    std::uint64_t seen = 0;
    ASSERT_TRUE(cached_.load(id_, inside, seen).ok());  // the transaction sees its own write
    expect_same_state(newer_state(), inside);
    EXPECT_EQ(seen, 2u);
  }
  EdgeDeviceState out;
  ASSERT_TRUE(cached_.load(id_, out, generation).ok());
  expect_same_state(make_rich_state(), out);
  EXPECT_EQ(generation, 1u);
}

// A batch: the working set takes the kept messages' states at the commit, not the undone one's.
TEST_F(CachedStore, SavepointRollbackDropsOnlyThatMessagesState) {
  const DevId two = dev_id_of("esp32-02");
  ASSERT_TRUE(cached_.begin().ok());
  ASSERT_TRUE(cached_.savepoint().ok());
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(cached_.save(id_, make_rich_state(), kNow, generation).ok());
  ASSERT_TRUE(cached_.release_savepoint().ok());
  ASSERT_TRUE(cached_.savepoint().ok());
  generation = kAnyGeneration;
  ASSERT_TRUE(cached_.save(id_, newer_state(), kNow + 1, generation).ok());
  generation = kAnyGeneration;
  ASSERT_TRUE(cached_.save(two, make_rich_state("esp32-02"), kNow, generation).ok());
  ASSERT_TRUE(cached_.rollback_to_savepoint().ok());
  EdgeDeviceState inside;
  std::uint64_t seen = 0;
  ASSERT_TRUE(cached_.load(id_, inside, seen).ok());  // the kept write, not the undone one
  expect_same_state(make_rich_state(), inside);
  ASSERT_TRUE(cached_.commit().ok());
  EXPECT_TRUE(cached_.working_set().find(id_.str()).has_value());
  EXPECT_FALSE(cached_.working_set().find(two.str()).has_value());
  EdgeDeviceState out;
  ASSERT_TRUE(sqlite_->load(two, out, generation).ok());
  EXPECT_EQ(generation, kAbsentGeneration);
  ASSERT_TRUE(cached_.load(id_, out, generation).ok());
  expect_same_state(make_rich_state(), out);
  EXPECT_EQ(generation, 1u);
}

TEST_F(CachedStore, CommitUpdatesTheWorkingSet) {
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(cached_.save(id_, make_rich_state(), kNow, generation).ok());
  Transaction tx(cached_);
  ASSERT_TRUE(cached_.save(id_, newer_state(), kNow + 1, generation).ok());
  ASSERT_TRUE(tx.commit().ok());
  EdgeDeviceState out;
  ASSERT_TRUE(cached_.load(id_, out, generation).ok());
  expect_same_state(newer_state(), out);
  ASSERT_TRUE(cached_.remove(id_).ok());
  EXPECT_FALSE(cached_.working_set().find(id_.str()).has_value());
  ASSERT_TRUE(cached_.load(id_, out, generation).ok());
  EXPECT_EQ(generation, kAbsentGeneration);
}

TEST_F(CachedStore, ConflictDropsTheStaleCopy) {
  // Two edges on one database file: each with its own connection and working set.
  auto other_sqlite = open_sqlite();
  CachedSessionStore other(*other_sqlite);
  std::uint64_t mine = kAnyGeneration;
  ASSERT_TRUE(cached_.save(id_, make_rich_state(), kNow, mine).ok());
  std::uint64_t theirs = mine;
  ASSERT_TRUE(other.save(id_, newer_state(), kNow + 1, theirs).ok());
  EXPECT_EQ(cached_.save(id_, make_rich_state(), kNow + 2, mine).status,
            StoreStatus::generation_conflict);
  EXPECT_FALSE(cached_.working_set().find(id_.str()).has_value());
  EdgeDeviceState out;
  ASSERT_TRUE(cached_.load(id_, out, mine).ok());
  EXPECT_EQ(mine, theirs);
  expect_same_state(newer_state(), out);
}

}  // namespace
}  // namespace dsekp::edge::testing
