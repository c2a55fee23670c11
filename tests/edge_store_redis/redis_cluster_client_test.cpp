// RedisClusterClient (edge/store/redis/redis_cluster_client.hpp) against a real Redis Cluster of
// 3 primaries and 3 replicas on loopback (engines/redis_cluster_nodes.hpp), one per test: every
// command reaches the slot's primary; a map made stale by a slot moved to another node is mended
// by MOVED; a slot half migrated is followed by ASK; a killed primary's slots are found on the
// promoted replica, with the writes that WAIT confirmed still there; a write its replica does
// not confirm in time fails the call; batches for many slots go to all primaries at once, one
// round trip each, and a batch whose slot moved follows the move while the others stand.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "edge/store/redis/redis_cluster_client.hpp"
#include "engines/redis_cluster_nodes.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::redis {
namespace {

using dsekp::engines::RedisClusterNodes;

std::string text_of(const Reply& r) {
  if (r == nullptr) return "(no reply)";
  if (r->type == REDIS_REPLY_INTEGER) return std::to_string(r->integer);
  if (r->type == REDIS_REPLY_NIL) return "(nil)";
  return r->str != nullptr ? std::string(r->str, r->len) : "(array)";
}

class RedisClusterClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<RedisClusterNodes>(dir_.path(), 3, 1);
    std::vector<RedisEndpoint> seeds;
    for (int i = 0; i < cluster_->size(); ++i) {
      RedisEndpoint e;
      e.port = cluster_->port(i);
      e.reconnect_min_ms = 10;
      e.reconnect_max_ms = 100;
      seeds.push_back(e);
    }
    client_ = std::make_unique<RedisClusterClient>(seeds);
    ASSERT_TRUE(client_->connect()) << client_->last_error();
  }
  std::string set(const std::string& key, const std::string& value) {
    const std::vector<std::string_view> args = {"SET", key, value};
    return text_of(client_->command(key_slot(key), args));
  }
  std::string get(const std::string& key) {
    const std::vector<std::string_view> args = {"GET", key};
    return text_of(client_->command(key_slot(key), args));
  }
  /// A primary other than `node`.
  int other_primary(int node) const {
    for (int i = 0; i < cluster_->size(); ++i)
      if (i != node &&
          cluster_->command(i, {"INFO", "replication"}).find("role:master") != std::string::npos)
        return i;
    return -1;
  }
  /// Starts moving `slot` from its primary to `to` with `key` (as redis-cli --cluster reshard
  /// does, key by key): the slot MIGRATING on the source, IMPORTING on the target, the key there.
  void migrate_key(std::uint16_t slot, int from, int to, const std::string& key) {
    const std::string s = std::to_string(slot);
    to_id_ = cluster_->command(to, {"CLUSTER", "MYID"});
    const std::string from_id = cluster_->command(from, {"CLUSTER", "MYID"});
    ASSERT_EQ(cluster_->command(to, {"CLUSTER", "SETSLOT", s, "IMPORTING", from_id}), "OK");
    ASSERT_EQ(cluster_->command(from, {"CLUSTER", "SETSLOT", s, "MIGRATING", to_id_}), "OK");
    ASSERT_EQ(cluster_->command(from, {"MIGRATE", "127.0.0.1", std::to_string(cluster_->port(to)),
                                       key, "0", "5000"}),
              "OK");
  }

  dsekp::test::TempDir dir_;
  std::unique_ptr<RedisClusterNodes> cluster_;
  std::unique_ptr<RedisClusterClient> client_;
  std::string to_id_;  // the migration target's node id
};

TEST_F(RedisClusterClientTest, EachKeyIsWrittenOnItsSlotsPrimaryAndSlotsMatchTheServers) {
  for (int i = 0; i < 300; ++i) {
    const std::string key = "dsekp:dev2:{device-" + std::to_string(i) + "}";
    const std::uint16_t slot = key_slot(key);
    ASSERT_EQ(cluster_->command(0, {"CLUSTER", "KEYSLOT", key}), std::to_string(slot)) << key;
    ASSERT_EQ(set(key, "v" + std::to_string(i)), "OK") << key;
    // The value is on the node the cluster says serves the slot (a direct read there).
    EXPECT_EQ(cluster_->command(cluster_->primary_of(slot), {"GET", key}), "v" + std::to_string(i));
  }
  EXPECT_EQ(client_->redirects(), 0u);
  EXPECT_EQ(client_->map_reads(), 1u);
}

TEST_F(RedisClusterClientTest, AStaleMapIsMendedByMoved) {
  const std::string key = "{moved-device}";
  const std::uint16_t slot = key_slot(key);
  ASSERT_EQ(set(key, "before"), "OK");
  const int from = cluster_->primary_of(slot);
  const int to = other_primary(from);
  ASSERT_GE(to, 0);
  const std::string old_owner = client_->owner_of(slot);
  migrate_key(slot, from, to, key);
  for (int node = 0; node < cluster_->size(); ++node)  // the migration finished
    (void)cluster_->command(node, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", to_id_});
  EXPECT_EQ(get(key), "before");
  EXPECT_GE(client_->redirects(), 1u);
  EXPECT_NE(client_->owner_of(slot), old_owner);
  EXPECT_EQ(client_->owner_of(slot), "127.0.0.1:" + std::to_string(cluster_->port(to)));
}

TEST_F(RedisClusterClientTest, AHalfMigratedSlotIsFollowedByAsk) {
  const std::string moved = "{ask-device}";
  const std::string stays = "{ask-device}:other";  // same slot, not migrated yet
  const std::uint16_t slot = key_slot(moved);
  ASSERT_EQ(set(moved, "migrated"), "OK");
  ASSERT_EQ(set(stays, "not yet"), "OK");
  const int from = cluster_->primary_of(slot);
  const int to = other_primary(from);
  ASSERT_GE(to, 0);
  migrate_key(slot, from, to, moved);
  const std::string owner = client_->owner_of(slot);
  EXPECT_EQ(get(moved), "migrated");          // ASK -> ASKING + GET on the target
  EXPECT_EQ(get(stays), "not yet");           // still served by the source
  EXPECT_EQ(client_->owner_of(slot), owner);  // ASK does not change the map
  EXPECT_GE(client_->redirects(), 1u);
}

TEST_F(RedisClusterClientTest, AKilledPrimarysSlotsAreServedByItsPromotedReplicaWithWaitedWrites) {
  const std::string key = "{failover-device}";
  const std::uint16_t slot = key_slot(key);
  const std::vector<std::string_view> write = {"SET", key, "confirmed"};
  ASSERT_EQ(client_->pipeline(slot, {write}, ReplicaWait{1, 1000}).size(), 1u)
      << client_->last_error();
  const int primary = cluster_->primary_of(slot);
  const std::vector<int> replicas = cluster_->replicas_of(primary);
  ASSERT_EQ(replicas.size(), 1u);
  cluster_->kill(primary);
  const auto killed = std::chrono::steady_clock::now();
  // Without an outage handler a call fails at once while the replica is not promoted yet.
  int outages = 0;
  client_->set_outage_handler([&](const std::string&) {
    ++outages;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return outages < 300;  // 30 s at most
  });
  EXPECT_EQ(get(key), "confirmed");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - killed)
                      .count();
  std::printf("a killed primary's slot served again after %lld ms (%d waits)\n",
              static_cast<long long>(ms), outages);
  EXPECT_GT(outages, 0);
  EXPECT_EQ(client_->owner_of(slot),
            "127.0.0.1:" + std::to_string(cluster_->port(replicas.front())));
  EXPECT_EQ(set(key, "after"), "OK");
  // The old primary comes back as a replica of the promoted one.
  cluster_->start(primary);
  EXPECT_TRUE(cluster_->wait_until_ok(std::chrono::seconds(30))) << cluster_->logs();
  EXPECT_EQ(cluster_->primary_of(slot), replicas.front());
}

TEST_F(RedisClusterClientTest, AnUnreachablePrimaryFailsTheCallWithoutAnOutageHandler) {
  const std::string key = "{unreachable-device}";
  const std::uint16_t slot = key_slot(key);
  const int primary = cluster_->primary_of(slot);
  cluster_->kill(primary);
  const std::vector<std::string_view> args = {"GET", key};
  EXPECT_EQ(client_->command(slot, args), nullptr);
  EXPECT_NE(client_->last_error().find(std::to_string(cluster_->port(primary))), std::string::npos)
      << client_->last_error();
  EXPECT_FALSE(client_->up());
}

// WAIT asks for the replicas the primary has, up to the number asked: with one replica per
// primary, asking for two waits for the one; a replica that hangs fails the call.
TEST_F(RedisClusterClientTest, AWriteItsReplicaDoesNotConfirmFailsTheCall) {
  const std::string key = "{wait-device}";
  const std::vector<std::string_view> write = {"SET", key, "x"};
  EXPECT_EQ(client_->pipeline(key_slot(key), {write, write}, ReplicaWait{2, 1000}).size(), 2u)
      << client_->last_error();
  const int replica = cluster_->replicas_of(cluster_->primary_of(key_slot(key))).front();
  cluster_->freeze(replica);
  EXPECT_TRUE(client_->pipeline(key_slot(key), {write}, ReplicaWait{1, 200}).empty());
  cluster_->thaw(replica);
  EXPECT_NE(client_->last_error().find("WAIT saw 0 of 1 replicas"), std::string::npos)
      << client_->last_error();
}

// With an outage handler (the daemon's pause) a replica that lags is waited for: WAIT alone is
// sent again (the write ran once), until the replica has it.
TEST_F(RedisClusterClientTest, AWriteItsReplicaConfirmsLateIsWaitedForThroughTheOutageHandler) {
  const std::string key = "{late-replica-device}";
  const int replica = cluster_->replicas_of(cluster_->primary_of(key_slot(key))).front();
  std::vector<std::string> reasons;
  client_->set_outage_handler([&](const std::string& why) {
    reasons.push_back(why);
    if (reasons.size() == 2) cluster_->thaw(replica);
    return reasons.size() < 20;
  });
  cluster_->freeze(replica);
  const std::vector<std::string_view> increment = {"INCR", key};
  const std::vector<Reply> replies = client_->pipeline(key_slot(key), {increment}, {1, 200});
  cluster_->thaw(replica);
  ASSERT_EQ(replies.size(), 1u) << client_->last_error();
  EXPECT_EQ(text_of(replies.front()), "1");  // run once, not again with each WAIT
  ASSERT_GE(reasons.size(), 2u);
  EXPECT_NE(reasons.front().find("WAIT saw 0 of 1 replicas"), std::string::npos) << reasons.front();
  EXPECT_EQ(cluster_->command(cluster_->primary_of(key_slot(key)), {"GET", key}), "1");
}

// Batches for many slots at once: each primary gets its batches in one write (with one WAIT),
// all primaries are written to before any reply is read.
TEST_F(RedisClusterClientTest, ManySlotsAtOnceCostOneRoundTripPerPrimary) {
  std::vector<std::string> keys;
  std::set<int> primaries;
  for (int i = 0; i < 30; ++i) {
    keys.push_back("{batch-device-" + std::to_string(i) + "}");
    primaries.insert(cluster_->primary_of(key_slot(keys.back())));
  }
  ASSERT_EQ(primaries.size(), 3u);
  const auto batches_of = [&](const std::string& value) {
    std::vector<SlotBatch> batches;
    for (const std::string& key : keys)
      batches.push_back({key_slot(key), {{"SET", key, value}, {"GET", key}}});
    return batches;
  };
  // The first call also learns each primary's replicas (CLUSTER NODES) for WAIT.
  ASSERT_EQ(client_->pipeline_slots(batches_of("first"), ReplicaWait{1, 1000}).size(), keys.size());
  const std::uint64_t before = client_->round_trips();
  const std::vector<std::vector<Reply>> replies =
      client_->pipeline_slots(batches_of("second"), ReplicaWait{1, 1000});
  EXPECT_EQ(client_->round_trips() - before, 3u);
  ASSERT_EQ(replies.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(replies[i].size(), 2u) << keys[i] << ": " << client_->last_error();
    EXPECT_EQ(text_of(replies[i][0]), "OK");
    EXPECT_EQ(text_of(replies[i][1]), "second");
    const int primary = cluster_->primary_of(key_slot(keys[i]));
    EXPECT_EQ(cluster_->command(primary, {"GET", keys[i]}), "second");
  }
  EXPECT_EQ(client_->redirects(), 0u);
}

// A batch whose slot moved since the map was read goes again on its own, to the new owner;
// the other batches are answered from the first round.
TEST_F(RedisClusterClientTest, ABatchForAMovedSlotFollowsTheMoveAndTheOthersStand) {
  const std::string moved = "{moved-batch-device}";
  const std::uint16_t slot = key_slot(moved);
  ASSERT_EQ(set(moved, "before"), "OK");
  const int from = cluster_->primary_of(slot);
  const int to = other_primary(from);
  ASSERT_GE(to, 0);
  migrate_key(slot, from, to, moved);
  for (int node = 0; node < cluster_->size(); ++node)
    (void)cluster_->command(node, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", to_id_});
  std::vector<SlotBatch> batches;
  std::vector<std::string> keys;
  for (int i = 0; i < 10; ++i) keys.push_back("{stays-device-" + std::to_string(i) + "}");
  keys.insert(keys.begin() + 5, moved);
  for (const std::string& key : keys) batches.push_back({key_slot(key), {{"APPEND", key, "+"}}});
  const std::vector<std::vector<Reply>> replies = client_->pipeline_slots(batches);
  ASSERT_EQ(replies.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(replies[i].size(), 1u) << keys[i] << ": " << client_->last_error();
    EXPECT_EQ(text_of(replies[i][0]), keys[i] == moved ? "7" : "1") << keys[i];
  }
  EXPECT_GE(client_->redirects(), 1u);
  EXPECT_EQ(client_->owner_of(slot), "127.0.0.1:" + std::to_string(cluster_->port(to)));
  EXPECT_EQ(cluster_->command(to, {"GET", moved}), "before+");
}

}  // namespace
}  // namespace dsekp::edge::redis
