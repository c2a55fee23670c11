// RedisSessionStore on a real Redis Cluster (3 primaries + 3 replicas on loopback) beyond the
// shared contract (store_contract_test.cpp runs that here too): a transaction over devices in
// many slots commits one script run per slot, one round trip per primary; the write-ahead rows
// go to this edge's list in each device's slot and are read back and cleared from all of them;
// a conflict in one slot leaves the other slots' runs applied (what the daemon's recovery relies
// on: the commit fails as a whole); a commit its replica does not confirm (WAIT) fails;
// make_durable() asks every primary; commits go on through a primary's SIGKILL once its replica is
// promoted (which then commits without a replica), and every commit that was confirmed is still
// there.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "edge/store/redis/redis_key_slot.hpp"
#include "store_backends.hpp"

namespace dsekp::edge::testing {
namespace {

using redis::key_slot;

constexpr std::uint64_t kNow = 1'764'460'800'000;

class RedisClusterStore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RedisClusterBackend::start_server(); }
  static void TearDownTestSuite() { RedisClusterBackend::stop_server(); }
  static engines::RedisClusterNodes& cluster() { return RedisClusterBackend::cluster(); }

  /// `count` devices (the tests check the slots they need to differ).
  std::vector<DevId> devices(int count) const {
    std::vector<DevId> out;
    for (int i = 0; i < count; ++i) out.push_back(dev_id_of("dev-" + std::to_string(i)));
    return out;
  }
  std::uint16_t slot_of(RedisSessionStore& store, const DevId& id) const {
    return key_slot(store.key_of(id));
  }
  /// Two devices named `a` and `b`, in slot order, each saved once by `edge_a`; then `edge_b`
  /// saves the device at `moved` (0: the earlier slot's, 1: the later's) again (generation 2),
  /// so edge A's view of it is stale.
  std::vector<DevId> two_devices_one_moved_on(RedisSessionStore& edge_a, RedisSessionStore& edge_b,
                                              const std::string& a, const std::string& b,
                                              std::size_t moved = 1) {
    std::vector<DevId> ids = {dev_id_of(a), dev_id_of(b)};
    std::sort(ids.begin(), ids.end(), [&](const DevId& x, const DevId& y) {
      return slot_of(edge_a, x) < slot_of(edge_a, y);
    });
    EXPECT_NE(slot_of(edge_a, ids[0]), slot_of(edge_a, ids[1]));
    for (const DevId& id : ids) {
      std::uint64_t g = kAbsentGeneration;
      EXPECT_TRUE(edge_a.save(id, make_rich_state(std::string(id.str())), kNow, g).ok());
    }
    std::uint64_t g = 1;
    EXPECT_TRUE(
        edge_b.save(ids[moved], make_rich_state(std::string(ids[moved].str())), kNow, g).ok());
    return ids;
  }

  RedisClusterBackend backend_;
};

TEST_F(RedisClusterStore, ATransactionOverManySlotsCommitsInOneRoundTripPerPrimary) {
  auto store = backend_.open_redis();
  const std::string key = store->pending_key_of("edge-trips");
  store->set_pending_key(key);
  const auto commit_saves = [&](const std::vector<DevId>& ids) {
    Transaction tx(*store);
    for (const DevId& id : ids) {
      std::uint64_t g = kAnyGeneration;
      ASSERT_TRUE(store->save(id, make_rich_state(std::string(id.str())), kNow, g).ok());
      ASSERT_TRUE(store->stage_pending_row(id.str(), "row of " + std::string(id.str())).ok());
    }
    ASSERT_TRUE(tx.commit().ok()) << store->last_error();
  };
  const std::vector<DevId> ids = devices(20);
  std::set<std::uint16_t> slots;
  std::set<int> primaries;
  for (const DevId& id : ids) {
    slots.insert(slot_of(*store, id));
    primaries.insert(cluster().primary_of(slot_of(*store, id)));
  }
  ASSERT_GT(slots.size(), 10u);
  ASSERT_EQ(primaries.size(), 3u);
  // The first commit also loads the script on each primary (NOSCRIPT, SCRIPT LOAD, the run
  // again), learns each one's replicas for WAIT and notes the lists' slots (one SADD).
  commit_saves(ids);
  const std::uint64_t before = store->round_trips();
  commit_saves(ids);
  // One script run per slot, each primary's runs and its WAIT in one round trip.
  EXPECT_EQ(store->round_trips() - before, primaries.size());
  auto other = backend_.open_redis();
  for (const DevId& id : ids) {
    EdgeDeviceState out;
    std::uint64_t g = 0;
    ASSERT_TRUE(other->load(id, out, g).ok());
    EXPECT_EQ(g, 2u) << id.str();
    expect_same_state(out, make_rich_state(std::string(id.str())));
  }
  // Primaries that lost the script (a restart, a promoted replica): NOSCRIPT from each, one
  // SCRIPT LOAD on each, then the runs once more all at once; not a round trip per slot.
  for (int primary : primaries) ASSERT_EQ(cluster().command(primary, {"SCRIPT", "FLUSH"}), "OK");
  const std::uint64_t before_flushed = store->round_trips();
  commit_saves(ids);
  EXPECT_EQ(store->round_trips() - before_flushed, 3 * primaries.size());
  std::vector<std::string> rows;
  const std::uint64_t before_read = store->round_trips();
  ASSERT_TRUE(store->read_pending(key, rows).ok()) << store->last_error();
  EXPECT_EQ(rows.size(), ids.size());
  // The set of slots, then every slot's list at once.
  EXPECT_EQ(store->round_trips() - before_read, 1 + primaries.size());
}

TEST_F(RedisClusterStore, RowsGoToTheListInTheirDevicesSlotAndAreReadBackAndCleared) {
  auto store = backend_.open_redis();
  const std::string key = store->pending_key_of("edge-a");
  store->set_pending_key(key);
  const std::vector<DevId> ids = devices(6);
  {
    Transaction tx(*store);
    for (const DevId& id : ids) {
      std::uint64_t g = kAbsentGeneration;
      ASSERT_TRUE(store->save(id, make_rich_state(std::string(id.str())), kNow, g).ok());
      ASSERT_TRUE(store->stage_pending_row(id.str(), "row of " + std::string(id.str())).ok());
    }
    ASSERT_TRUE(tx.commit().ok()) << store->last_error();
  }
  EXPECT_EQ(store->last_commit_rows(), ids.size());
  for (const DevId& id : ids) {
    const std::uint16_t slot = slot_of(*store, id);
    const std::string list = RedisSessionStore::pending_key_in_slot(key, slot);
    EXPECT_EQ(key_slot(list), slot);
    // Read on the slot's primary itself: the row is there, next to its device.
    // (After the commit's unit mark.)
    EXPECT_EQ(cluster().command(cluster().primary_of(slot), {"LINDEX", list, "1"}),
              "row of " + std::string(id.str()));
  }
  std::vector<std::string> rows;
  ASSERT_TRUE(store->read_pending(key, rows).ok()) << store->last_error();
  std::sort(rows.begin(), rows.end());
  std::vector<std::string> expected;
  for (const DevId& id : ids) expected.push_back("row of " + std::string(id.str()));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(rows, expected);
  ASSERT_TRUE(store->clear_pending(key).ok());
  ASSERT_TRUE(store->read_pending(key, rows).ok());
  EXPECT_TRUE(rows.empty());
}

// A slot's list is replaced only when a commit touches the slot again: the recovery returns the
// newest commit's rows only (older ones are stored locally, and may have been pruned since).
TEST_F(RedisClusterStore, OnlyTheNewestCommitsRowsAreRecovered) {
  auto store = backend_.open_redis();
  const std::string key = store->pending_key_of("edge-b");
  store->set_pending_key(key);
  const std::vector<DevId> ids = devices(2);
  ASSERT_NE(slot_of(*store, ids[0]), slot_of(*store, ids[1]));
  for (const std::vector<DevId>& unit : {ids, std::vector<DevId>{ids[0]}}) {
    Transaction tx(*store);
    for (const DevId& id : unit) {
      std::uint64_t g = kAnyGeneration;
      ASSERT_TRUE(store->save(id, make_rich_state(std::string(id.str())), kNow, g).ok());
      ASSERT_TRUE(store
                      ->stage_pending_row(id.str(), "unit " + std::to_string(unit.size()) + " " +
                                                        std::string(id.str()))
                      .ok());
    }
    ASSERT_TRUE(tx.commit().ok()) << store->last_error();
  }
  std::vector<std::string> rows;
  ASSERT_TRUE(store->read_pending(key, rows).ok()) << store->last_error();
  EXPECT_EQ(rows, std::vector<std::string>{"unit 1 " + std::string(ids[0].str())});
}

// After a commit that failed half way, the recovery finds the rows of the runs that applied.
TEST_F(RedisClusterStore, ThePartOfAFailedCommitThatAppliedIsRecovered) {
  for (std::size_t moved : {0u, 1u}) {
    auto edge_a = backend_.open_redis();
    auto edge_b = backend_.open_redis();
    const std::string tag = "partial-" + std::to_string(moved);
    const std::string key = edge_a->pending_key_of("edge-c" + std::to_string(moved));
    edge_a->set_pending_key(key);
    const std::vector<DevId> ids =
        two_devices_one_moved_on(*edge_a, *edge_b, tag + "-a", tag + "-b", moved);
    {
      Transaction tx(*edge_a);
      for (const DevId& id : ids) {
        std::uint64_t stale = 1;
        ASSERT_TRUE(edge_a->save(id, make_rich_state(std::string(id.str())), kNow, stale).ok());
        ASSERT_TRUE(edge_a->stage_pending_row(id.str(), "row of " + std::string(id.str())).ok());
      }
      EXPECT_EQ(tx.commit().status, StoreStatus::generation_conflict);
    }
    std::vector<std::string> rows;
    ASSERT_TRUE(edge_a->read_pending(key, rows).ok()) << edge_a->last_error();
    EXPECT_EQ(rows, std::vector<std::string>{"row of " + std::string(ids[1 - moved].str())});
  }
}

// What a conflicting slot leaves: every slot's run goes, whichever conflicts; the others apply.
TEST_F(RedisClusterStore, AConflictInOneSlotLeavesTheOtherSlotsRunsApplied) {
  for (std::size_t moved : {0u, 1u}) {
    SCOPED_TRACE("the device that moved on: the " + std::string(moved == 0 ? "earlier" : "later") +
                 " slot's");
    auto edge_a = backend_.open_redis();
    auto edge_b = backend_.open_redis();
    const std::string tag = "conflict-" + std::to_string(moved);
    const std::vector<DevId> ids =
        two_devices_one_moved_on(*edge_a, *edge_b, tag + "-a", tag + "-b", moved);
    {
      Transaction tx(*edge_a);
      for (std::size_t i = 0; i < ids.size(); ++i) {
        std::uint64_t g = 1;  // stale for ids[moved]
        ASSERT_TRUE(edge_a->save(ids[i], make_rich_state(std::string(ids[i].str())), kNow, g).ok());
      }
      EXPECT_EQ(tx.commit().status, StoreStatus::generation_conflict);
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      EdgeDeviceState out;
      std::uint64_t g = 0;
      ASSERT_TRUE(edge_b->load(ids[i], out, g).ok());
      // The other slot's run applied (generation 2); the moved device keeps edge B's save (2).
      EXPECT_EQ(g, 2u) << ids[i].str();
    }
  }
}

TEST_F(RedisClusterStore, ACommitItsReplicaDoesNotConfirmFails) {
  RedisStoreOptions o = backend_.options();
  o.cluster_wait = redis::ReplicaWait{1, 200};
  std::string error;
  auto store = RedisSessionStore::open(o, error);
  ASSERT_NE(store, nullptr) << error;
  const DevId id = dev_id_of("wait-device");
  const int replica =
      cluster().replicas_of(cluster().primary_of(key_slot(store->key_of(id)))).front();
  cluster().freeze(replica);
  std::uint64_t g = kAbsentGeneration;
  const StoreResult r = store->save(id, make_rich_state("wait-device"), kNow, g);
  cluster().thaw(replica);
  EXPECT_EQ(r.status, StoreStatus::storage_failure);
  EXPECT_NE(store->last_error().find("WAIT saw 0 of 1 replicas"), std::string::npos)
      << store->last_error();
  ASSERT_TRUE(cluster().wait_until_ok(std::chrono::seconds(30)));
}

// One commit over devices on all three primaries, one primary's replica hung: that primary's
// WAIT fails the commit (never hidden by the others' success), the other primaries' runs apply.
TEST_F(RedisClusterStore, AReplicaThatDoesNotConfirmOnePrimarysRunsFailsTheWholeCommit) {
  RedisStoreOptions o = backend_.options();
  o.cluster_wait = redis::ReplicaWait{1, 200};
  std::string error;
  auto store = RedisSessionStore::open(o, error);
  ASSERT_NE(store, nullptr) << error;
  std::vector<DevId> ids;
  std::map<int, DevId> one_per_primary;
  for (int i = 0; one_per_primary.size() < 3 && i < 100; ++i) {
    const DevId id = dev_id_of("spread-" + std::to_string(i));
    one_per_primary.emplace(cluster().primary_of(slot_of(*store, id)), id);
  }
  ASSERT_EQ(one_per_primary.size(), 3u);
  const auto& [hung_primary, hung_device] = *one_per_primary.begin();
  const int replica = cluster().replicas_of(hung_primary).front();
  cluster().freeze(replica);
  StoreResult r;
  {
    Transaction tx(*store);
    for (const auto& [primary, id] : one_per_primary) {
      std::uint64_t g = kAbsentGeneration;
      ASSERT_TRUE(store->save(id, make_rich_state(std::string(id.str())), kNow, g).ok());
    }
    r = tx.commit();
  }
  cluster().thaw(replica);
  EXPECT_EQ(r.status, StoreStatus::storage_failure);
  EXPECT_NE(store->last_error().find("WAIT saw 0 of 1 replicas"), std::string::npos)
      << store->last_error();
  ASSERT_TRUE(cluster().wait_until_ok(std::chrono::seconds(30)));
  auto other = backend_.open_redis();
  for (const auto& [primary, id] : one_per_primary) {
    EdgeDeviceState out;
    std::uint64_t g = 0;
    ASSERT_TRUE(other->load(id, out, g).ok());
    // Every run applied on its primary (the hung replica's primary too: only its copy is
    // unconfirmed), as after a lost reply.
    EXPECT_EQ(g, 1u) << id.str();
  }
}

TEST_F(RedisClusterStore, MakeDurableAsksEveryPrimary) {
  auto store = backend_.open_redis();
  ASSERT_TRUE(store->make_durable().ok()) << store->last_error();
  const int primary = cluster().primary_of(key_slot("{a}"));
  ASSERT_EQ(cluster().command(primary, {"CONFIG", "SET", "appendfsync", "everysec"}), "OK");
  const StoreResult r = store->make_durable();
  EXPECT_EQ(r.status, StoreStatus::storage_failure);
  EXPECT_NE(r.message.find(std::to_string(cluster().port(primary)) + ": the server runs with "
                                                                     "appendfsync everysec"),
            std::string::npos)
      << r.message;
  ASSERT_EQ(cluster().command(primary, {"CONFIG", "SET", "appendfsync", "always"}), "OK");
}

// A cluster of its own: a primary is killed while commits go on.
TEST(RedisClusterStoreFailover, CommitsGoOnAfterAPrimaryIsKilledAndNoneConfirmedIsLost) {
  test::TempDir dir;
  engines::RedisClusterNodes cluster(dir.path().string(), 3, 1);
  RedisStoreOptions o;
  for (int i = 0; i < cluster.size(); ++i)
    o.cluster_seeds.emplace_back("127.0.0.1", cluster.port(i));
  o.endpoint.reconnect_min_ms = 10;
  o.endpoint.reconnect_max_ms = 100;
  std::string error;
  auto store = RedisSessionStore::open(o, error);
  ASSERT_NE(store, nullptr) << error;
  int outages = 0;
  std::string last_outage;
  store->set_outage_handler([&](const std::string& why) {
    last_outage = why;
    ++outages;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return outages < 600;  // 30 s at most
  });
  std::vector<DevId> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(dev_id_of("failover-" + std::to_string(i)));
  std::vector<std::uint64_t> confirmed(ids.size(), 0);  // commits confirmed per device
  const int victim = cluster.primary_of(key_slot(store->key_of(ids[0])));
  std::chrono::milliseconds gap{0};
  for (int round = 0; round < 40; ++round) {
    if (round == 15) cluster.kill(victim);
    const auto start = std::chrono::steady_clock::now();
    Transaction tx(*store);
    for (const DevId& id : ids) {
      std::uint64_t g = kAnyGeneration;
      ASSERT_TRUE(store->save(id, make_rich_state(std::string(id.str())), kNow, g).ok());
    }
    const StoreResult r = tx.commit();
    if (round == 15)
      gap = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start);
    if (!r.ok()) continue;  // not confirmed: may or may not have applied
    for (std::size_t i = 0; i < ids.size(); ++i) ++confirmed[i];
  }
  std::printf("the commit during the primary's failover took %lld ms (%d outage waits)\n",
              static_cast<long long>(gap.count()), outages);
  EXPECT_GT(outages, 0);
  // Every confirmed commit is there: each device's generation counts at least its confirmed
  // saves (an unconfirmed commit may have applied too).
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EdgeDeviceState out;
    std::uint64_t g = 0;
    ASSERT_TRUE(store->load(ids[i], out, g).ok()) << store->last_error();
    EXPECT_GE(g, confirmed[i]) << ids[i].str();
    EXPECT_GE(confirmed[i], 35u) << ids[i].str() << "; the last outage: " << last_outage;
  }
}

}  // namespace
}  // namespace dsekp::edge::testing
