// The SessionStore contract, one test body run against each implementation (SQLite file, real
// Redis server; built a second time into the Redis Cluster tests, with
// DSEKP_STORE_CONTRACT_ON_CLUSTER, for a real Redis Cluster): round trips of every field, absent
// devices, removal, corrupt stored bytes, refused states, transactions (commit, rollback, no
// nesting, read-your-writes, a conflict that applies nothing) and generations between two store
// objects ("two edges").
#include <gtest/gtest.h>

#include "store_backends.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr std::uint64_t kNow = 1'764'460'800'000;

template <typename Backend>
class StoreContract : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if constexpr (requires { Backend::start_server(); }) Backend::start_server();
  }
  static void TearDownTestSuite() {
    if constexpr (requires { Backend::stop_server(); }) Backend::stop_server();
  }

  Backend backend_;
  DevId id_ = dev_id_of("esp32-01");
  DevId other_ = dev_id_of("esp32-02");
};

struct BackendNames {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};
#ifdef DSEKP_STORE_CONTRACT_ON_CLUSTER
using Backends = ::testing::Types<RedisClusterBackend>;
#else
using Backends = ::testing::Types<SqliteBackend, RedisBackend>;
#endif
TYPED_TEST_SUITE(StoreContract, Backends, BackendNames);

TYPED_TEST(StoreContract, AbsentDeviceLoadsAsFreshState) {
  auto store = this->backend_.open();
  EdgeDeviceState out = make_rich_state();
  std::uint64_t generation = 99;
  ASSERT_TRUE(store->load(this->id_, out, generation).ok());
  EXPECT_EQ(generation, kAbsentGeneration);
  expect_same_state(out, EdgeDeviceState{});
}

TYPED_TEST(StoreContract, SavedStateLoadsBackWithEveryField) {
  auto store = this->backend_.open();
  const EdgeDeviceState state = make_rich_state();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(this->id_, state, kNow, generation).ok());
  EXPECT_EQ(generation, 1u);
  EdgeDeviceState out;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(store->load(this->id_, out, loaded).ok());
  EXPECT_EQ(loaded, 1u);
  expect_same_state(state, out);
  generation = kAnyGeneration;
  ASSERT_TRUE(store->save(this->id_, state, kNow + 1, generation).ok());
  EXPECT_EQ(generation, 2u);
}

// The ratchet (PROTOCOL.md 6.6) lives in the device's state: its secret round-trips, and of two
// edges that step it from the same loaded state only one commit applies (the other is a
// generation_conflict and handles its message again), so the secret cannot fork.
TYPED_TEST(StoreContract, ARatchetingStateRoundTripsAndItsStepCannotFork) {
  auto mine_store = this->backend_.open();
  auto their_store = this->backend_.open();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(mine_store->save(this->id_, make_ratcheting_state(), kNow, generation).ok());
  EdgeDeviceState mine, theirs;
  std::uint64_t mine_generation = 0, their_generation = 0;
  ASSERT_TRUE(mine_store->load(this->id_, mine, mine_generation).ok());
  ASSERT_TRUE(their_store->load(this->id_, theirs, their_generation).ok());
  expect_same_state(make_ratcheting_state(), mine);
  // Each steps by an INIT one secret ahead (its pending session is under the new one).
  mine.ratchet.epoch = mine.pending.ratchet_epoch = 8;
  mine.ratchet.secret = pattern<DevSecret>(0xE0);
  theirs.ratchet.epoch = theirs.pending.ratchet_epoch = 8;
  theirs.ratchet.secret = pattern<DevSecret>(0xF0);
  ASSERT_TRUE(mine_store->save(this->id_, mine, kNow + 1, mine_generation).ok());
  EXPECT_EQ(their_store->save(this->id_, theirs, kNow + 1, their_generation).status,
            StoreStatus::generation_conflict);
  EdgeDeviceState out;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(their_store->load(this->id_, out, loaded).ok());
  EXPECT_EQ(out.ratchet.epoch, 8u);
  EXPECT_TRUE(same_bytes(out.ratchet.secret, pattern<DevSecret>(0xE0)));
}

TYPED_TEST(StoreContract, StateIsSeenByAnotherStoreObject) {
  const EdgeDeviceState state = make_rich_state();
  {
    auto store = this->backend_.open();
    std::uint64_t generation = kAnyGeneration;
    ASSERT_TRUE(store->save(this->id_, state, kNow, generation).ok());
  }
  auto store = this->backend_.open();
  EdgeDeviceState out;
  std::uint64_t generation = 0;
  ASSERT_TRUE(store->load(this->id_, out, generation).ok());
  EXPECT_EQ(generation, 1u);
  expect_same_state(state, out);
}

TYPED_TEST(StoreContract, RemoveDeletesTheDevice) {
  auto store = this->backend_.open();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(this->id_, make_rich_state(), kNow, generation).ok());
  ASSERT_TRUE(store->remove(this->id_).ok());
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(this->id_, out, generation).ok());
  EXPECT_EQ(generation, kAbsentGeneration);
  EXPECT_TRUE(store->remove(this->id_).ok());  // absent: still ok
  generation = kAbsentGeneration;              // re-created from scratch
  ASSERT_TRUE(store->save(this->id_, make_rich_state(), kNow, generation).ok());
  EXPECT_EQ(generation, 1u);
}

TYPED_TEST(StoreContract, CorruptedStateIsANamedError) {
  auto store = this->backend_.open();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(this->id_, make_rich_state(), kNow, generation).ok());
  const struct {
    std::string bytes;
    StateCodecError expected;
  } cases[] = {
      {std::string(), StateCodecError::truncated},
      {std::string("\x01\x02", 2), StateCodecError::truncated},
      {std::string("\x07", 1), StateCodecError::unsupported_version},
      {std::string("\x01\x02\x21\x2f", 4), StateCodecError::bad_dev_id},
  };
  for (const auto& c : cases) {
    this->backend_.corrupt("esp32-01", c.bytes);
    EdgeDeviceState out = make_rich_state();
    std::uint64_t loaded = 0;
    const StoreResult r = store->load(this->id_, out, loaded);
    EXPECT_EQ(r.status, StoreStatus::corrupt_state) << c.bytes.size();
    EXPECT_EQ(r.codec, c.expected) << c.bytes.size();
    EXPECT_EQ(loaded, 1u);  // so that the edge can replace the state deliberately
    expect_same_state(out, EdgeDeviceState{});
  }
  // The edge replaces the corrupt state with a conditional save on the reported generation.
  std::uint64_t replace = 1;
  ASSERT_TRUE(store->save(this->id_, make_rich_state(), kNow, replace).ok());
  EXPECT_EQ(replace, 2u);
}

TYPED_TEST(StoreContract, SaveRefusesAStateOfAnotherDeviceOrABrokenOne) {
  auto store = this->backend_.open();
  std::uint64_t generation = kAnyGeneration;
  EXPECT_EQ(store->save(this->id_, make_rich_state("esp32-02"), kNow, generation).status,
            StoreStatus::dev_id_mismatch);
  EdgeDeviceState broken = make_rich_state();
  broken.established_count = 12;
  const StoreResult r = store->save(this->id_, broken, kNow, generation);
  EXPECT_EQ(r.status, StoreStatus::invalid_state);
  EXPECT_EQ(r.codec, StateCodecError::too_many_sessions);
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(this->id_, out, generation).ok());
  EXPECT_EQ(generation, kAbsentGeneration);  // nothing was written
}

TYPED_TEST(StoreContract, RollbackLeavesTheOldState) {
  auto store = this->backend_.open();
  const EdgeDeviceState old_state = make_rich_state();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(this->id_, old_state, kNow, generation).ok());
  {
    Transaction tx(*store);
    ASSERT_TRUE(tx.status().ok());
    EdgeDeviceState newer = make_rich_state();
    ASSERT_EQ(newer.established[1].uplink_window.accept(64), Error::ok);
    ASSERT_TRUE(store->save(this->id_, newer, kNow + 1, generation).ok());
    ASSERT_TRUE(store->remove(this->other_).ok());
    // No commit: the guard rolls back, as when the edge fails before it publishes.
  }
  EXPECT_FALSE(store->in_transaction());
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(this->id_, out, generation).ok());
  EXPECT_EQ(generation, 1u);
  expect_same_state(old_state, out);
}

TYPED_TEST(StoreContract, CommitAppliesSavesAndRemovesTogether) {
  auto store = this->backend_.open();
  auto observer = this->backend_.open();  // another edge: sees nothing before the commit
  const EdgeDeviceState state = make_rich_state();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(this->other_, make_rich_state("esp32-02"), kNow, generation).ok());
  {
    Transaction tx(*store);
    ASSERT_TRUE(tx.status().ok());
    generation = kAbsentGeneration;
    ASSERT_TRUE(store->save(this->id_, state, kNow, generation).ok());
    ASSERT_TRUE(store->remove(this->other_).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  EXPECT_EQ(generation, 1u);  // a conditional save's generation is known before the commit
  EdgeDeviceState out;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(observer->load(this->id_, out, loaded).ok());
  EXPECT_EQ(loaded, 1u);
  expect_same_state(state, out);
  ASSERT_TRUE(observer->load(this->other_, out, loaded).ok());
  EXPECT_EQ(loaded, kAbsentGeneration);
}

TYPED_TEST(StoreContract, LoadInsideATransactionSeesItsOwnWrites) {
  auto store = this->backend_.open();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(this->other_, make_rich_state("esp32-02"), kNow, generation).ok());
  Transaction tx(*store);
  ASSERT_TRUE(tx.status().ok());
  const EdgeDeviceState state = make_rich_state();
  generation = kAbsentGeneration;
  ASSERT_TRUE(store->save(this->id_, state, kNow, generation).ok());
  ASSERT_TRUE(store->remove(this->other_).ok());
  EdgeDeviceState out;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(store->load(this->id_, out, loaded).ok());
  EXPECT_EQ(loaded, generation);
  expect_same_state(state, out);
  std::uint64_t other_loaded = 0;
  ASSERT_TRUE(store->load(this->other_, out, other_loaded).ok());
  EXPECT_EQ(other_loaded, kAbsentGeneration);
  // Saving again on the generation just loaded, in the same unit, is not a conflict.
  ASSERT_TRUE(store->save(this->id_, state, kNow + 1, loaded).ok());
  ASSERT_TRUE(tx.commit().ok());
  ASSERT_TRUE(store->load(this->id_, out, generation).ok());
  EXPECT_EQ(generation, 2u);
}

TYPED_TEST(StoreContract, TransactionsDoNotNest) {
  auto store = this->backend_.open();
  EXPECT_EQ(store->commit().status, StoreStatus::transaction_misuse);
  EXPECT_EQ(store->rollback().status, StoreStatus::transaction_misuse);
  Transaction tx(*store);
  ASSERT_TRUE(tx.status().ok());
  EXPECT_EQ(store->begin().status, StoreStatus::transaction_misuse);
  EXPECT_TRUE(tx.commit().ok());
  EXPECT_EQ(tx.commit().status, StoreStatus::transaction_misuse);
}

TYPED_TEST(StoreContract, GenerationsCatchAnotherEdge) {
  auto mine_store = this->backend_.open();
  auto their_store = this->backend_.open();
  std::uint64_t mine = kAbsentGeneration;
  ASSERT_TRUE(mine_store->save(this->id_, make_rich_state(), kNow, mine).ok());
  EXPECT_EQ(mine, 1u);
  std::uint64_t again = kAbsentGeneration;  // "must not exist yet"
  EXPECT_EQ(their_store->save(this->id_, make_rich_state(), kNow, again).status,
            StoreStatus::generation_conflict);
  std::uint64_t theirs = 1;  // the other edge loaded generation 1 too, and saves first
  ASSERT_TRUE(their_store->save(this->id_, make_rich_state(), kNow, theirs).ok());
  EXPECT_EQ(theirs, 2u);
  EXPECT_EQ(mine_store->save(this->id_, make_rich_state(), kNow, mine).status,
            StoreStatus::generation_conflict);
  EXPECT_EQ(mine, 1u);  // unchanged on a conflict
  ASSERT_TRUE(their_store->save(this->id_, make_rich_state(), kNow, theirs).ok());
  EXPECT_EQ(theirs, 3u);
}

// A unit whose conditional save conflicts stores nothing, not even its other writes. SQLite
// reports the conflict at the save (it holds the write lock), Redis at the commit (the whole
// unit is checked by one script); either way the unit ends without effect. Not on a Redis
// Cluster, where a unit is one script run per slot and the runs before the conflicting one stay
// applied (RedisClusterStore.AConflictInOneSlotLeavesTheRunsOfEarlierSlotsApplied).
TYPED_TEST(StoreContract, AUnitWithAConflictAppliesNothing) {
  if constexpr (std::is_same_v<TypeParam, RedisClusterBackend>)
    GTEST_SKIP() << "atomic per slot on a Redis Cluster, not per unit";
  auto store = this->backend_.open();
  auto other_edge = this->backend_.open();
  std::uint64_t g_id = kAnyGeneration;
  std::uint64_t g_other = kAnyGeneration;
  const EdgeDeviceState id_state = make_rich_state();
  const EdgeDeviceState other_state = make_rich_state("esp32-02");
  ASSERT_TRUE(store->save(this->id_, id_state, kNow, g_id).ok());
  ASSERT_TRUE(store->save(this->other_, other_state, kNow, g_other).ok());
  std::uint64_t stale = g_other;
  std::uint64_t bump = g_other;
  ASSERT_TRUE(other_edge->save(this->other_, other_state, kNow, bump).ok());  // now 2
  {
    Transaction tx(*store);
    ASSERT_TRUE(tx.status().ok());
    EdgeDeviceState changed = make_rich_state();
    changed.next_session_serial = 4242;
    ASSERT_TRUE(store->save(this->id_, changed, kNow + 1, g_id).ok());
    const StoreResult saved = store->save(this->other_, other_state, kNow + 1, stale);
    if (saved.ok()) {
      EXPECT_EQ(tx.commit().status, StoreStatus::generation_conflict);
    } else {
      EXPECT_EQ(saved.status, StoreStatus::generation_conflict);
      EXPECT_TRUE(tx.rollback().ok());
    }
  }
  EXPECT_FALSE(store->in_transaction());
  EdgeDeviceState out;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(other_edge->load(this->id_, out, loaded).ok());
  EXPECT_EQ(loaded, 1u);
  expect_same_state(id_state, out);
  ASSERT_TRUE(other_edge->load(this->other_, out, loaded).ok());
  EXPECT_EQ(loaded, 2u);
}

// A batch: one transaction, one savepoint per message; an undone message leaves the others.
TYPED_TEST(StoreContract, RollingBackToASavepointUndoesOnlyTheWritesAfterIt) {
  auto store = this->backend_.open();
  EXPECT_EQ(store->savepoint().status, StoreStatus::transaction_misuse);  // no transaction
  const EdgeDeviceState first = make_rich_state();
  {
    Transaction tx(*store);
    ASSERT_TRUE(tx.status().ok());
    ASSERT_TRUE(store->savepoint().ok());
    EXPECT_EQ(store->savepoint().status, StoreStatus::transaction_misuse);  // one level
    std::uint64_t g = kAbsentGeneration;
    ASSERT_TRUE(store->save(this->id_, first, kNow, g).ok());
    ASSERT_TRUE(store->release_savepoint().ok());
    EXPECT_FALSE(store->in_savepoint());
    ASSERT_TRUE(store->savepoint().ok());
    std::uint64_t g2 = kAbsentGeneration;
    ASSERT_TRUE(store->save(this->other_, make_rich_state("esp32-02"), kNow, g2).ok());
    EdgeDeviceState changed = make_rich_state();
    changed.next_session_serial = 777;
    ASSERT_TRUE(store->save(this->id_, changed, kNow, g).ok());
    ASSERT_TRUE(store->rollback_to_savepoint().ok());
    EXPECT_TRUE(store->in_transaction());
    EXPECT_EQ(store->release_savepoint().status, StoreStatus::transaction_misuse);
    ASSERT_TRUE(tx.commit().ok());
  }
  auto observer = this->backend_.open();
  EdgeDeviceState out;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(observer->load(this->id_, out, loaded).ok());
  EXPECT_EQ(loaded, 1u);
  expect_same_state(first, out);
  ASSERT_TRUE(observer->load(this->other_, out, loaded).ok());
  EXPECT_EQ(loaded, kAbsentGeneration);
}

}  // namespace
}  // namespace dsekp::edge::testing
