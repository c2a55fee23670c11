// RedisSessionStore beyond the shared contract: two edges racing on one device (exactly one
// wins), one script per commit (round trips), Redis killed (storage_failure within a bound,
// fail-fast backoff) and restarted from its AOF (state intact, the script reloaded), a state of
// the largest size, many devices, key prefixes, hashes not written by the store, and the URL.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "edge/store/redis/redis_store_url.hpp"
#include "engines/redis_server.hpp"
#include "store_backends.hpp"

namespace dsekp::edge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr std::uint64_t kNow = 1'764'460'800'000;

class RedisStore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RedisBackend::start_server(); }
  static void TearDownTestSuite() { RedisBackend::stop_server(); }

  RedisBackend backend_;
  DevId id_ = dev_id_of("esp32-01");
};

// The largest state the format allows: a pending INIT, 8 sessions with 1024-seq windows, a full
// INIT replay cache.
EdgeDeviceState make_largest_state(const std::string& dev_id) {
  EdgeDeviceState s = make_rich_state(dev_id);
  for (std::uint32_t i = 0; i < kMaxEstablishedSessions; ++i) {
    s.established[i] = make_session(static_cast<std::uint16_t>(10 + i), 1024,
                                    {1, 100, 1000 + i, 2000 + i}, static_cast<std::uint8_t>(i));
  }
  s.established_count = kMaxEstablishedSessions;
  for (std::size_t i = 0; i < kInitReplayCacheSize; ++i) {
    s.seen_inits.entries[i] = InitReplayCache::Entry{
        pattern<DevNonce>(static_cast<std::uint8_t>(i)), 1'764'461'100u + i, true};
  }
  return s;
}

TEST_F(RedisStore, TwoEdgesDecidingOnTheSameGenerationExactlyOneWins) {
  auto edge_a = backend_.open_redis();
  auto edge_b = backend_.open_redis();
  std::uint64_t g = kAnyGeneration;
  ASSERT_TRUE(edge_a->save(id_, make_rich_state(), kNow, g).ok());
  // Both load the same state and both decide to accept seq 64 of session 2.
  EdgeDeviceState a_state, b_state;
  std::uint64_t a_gen = 0, b_gen = 0;
  ASSERT_TRUE(edge_a->load(id_, a_state, a_gen).ok());
  ASSERT_TRUE(edge_b->load(id_, b_state, b_gen).ok());
  ASSERT_EQ(a_state.established[1].uplink_window.accept(64), Error::ok);
  ASSERT_EQ(b_state.established[1].uplink_window.accept(64), Error::ok);
  Transaction a_tx(*edge_a), b_tx(*edge_b);
  ASSERT_TRUE(edge_a->save(id_, a_state, kNow, a_gen).ok());
  ASSERT_TRUE(edge_b->save(id_, b_state, kNow, b_gen).ok());
  EXPECT_TRUE(b_tx.commit().ok());
  EXPECT_EQ(a_tx.commit().status, StoreStatus::generation_conflict);
  // A re-handles the message: the frame is now in the window it loads, i.e. a replay.
  ASSERT_TRUE(edge_a->load(id_, a_state, a_gen).ok());
  EXPECT_EQ(a_gen, 2u);
  EXPECT_EQ(a_state.established[1].uplink_window.accept(64), Error::replay);
}

// Two threads, each its own store object ("edge"), move one device's counter with load ->
// modify -> conditional save, retrying on conflicts. With an exact CAS no increment is lost
// and none is applied twice: the final value is the number of successful saves.
TEST_F(RedisStore, RacingEdgesLoseNoUpdateAndApplyNoneTwice) {
  {
    auto init = backend_.open_redis();
    std::uint64_t g = kAbsentGeneration;
    EdgeDeviceState s = make_rich_state();
    s.next_session_serial = 0;
    ASSERT_TRUE(init->save(id_, s, kNow, g).ok());
  }
  constexpr int kPerEdge = 300;
  constexpr int kMaxAttempts = 100'000;  // bounds the loop; never reached in practice
  std::atomic<int> conflicts{0};
  std::atomic<int> failures{0};
  const auto edge = [&] {
    auto store = backend_.open_redis();
    if (!store) return failures.fetch_add(1), void();
    int done = 0;
    for (int attempt = 0; done < kPerEdge && attempt < kMaxAttempts; ++attempt) {
      EdgeDeviceState s;
      std::uint64_t g = 0;
      if (!store->load(id_, s, g).ok()) return failures.fetch_add(1), void();
      ++s.next_session_serial;
      const StoreResult r = store->save(id_, s, kNow, g);
      if (r.ok()) {
        ++done;
      } else if (r.status == StoreStatus::generation_conflict) {
        conflicts.fetch_add(1);
      } else {
        return failures.fetch_add(1), void();
      }
    }
    if (done != kPerEdge) failures.fetch_add(1);
  };
  std::thread a(edge), b(edge);
  a.join();
  b.join();
  ASSERT_EQ(failures.load(), 0);
  auto check = backend_.open_redis();
  EdgeDeviceState s;
  std::uint64_t g = 0;
  ASSERT_TRUE(check->load(id_, s, g).ok());
  EXPECT_EQ(s.next_session_serial, 2u * kPerEdge);
  EXPECT_EQ(g, 1u + 2u * kPerEdge);  // one generation per successful save
  std::printf("racing edges: %d successful saves, %d conflicts\n", 2 * kPerEdge, conflicts.load());
}

TEST_F(RedisStore, EachCallIsOneRoundTripAndACommitIsOneScript) {
  auto store = backend_.open_redis();
  // At open: INFO cluster (a cluster node is refused), SCRIPT LOAD.
  const std::uint64_t start = store->round_trips();
  EXPECT_EQ(start, 2u);
  EdgeDeviceState s;
  std::uint64_t g = 0;
  ASSERT_TRUE(store->load(id_, s, g).ok());
  EXPECT_EQ(store->round_trips(), start + 1);
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, g).ok());
  EXPECT_EQ(store->round_trips(), start + 2);
  {
    Transaction tx(*store);
    for (int i = 0; i < 5; ++i) {
      const DevId d = dev_id_of("dev-" + std::to_string(i));
      std::uint64_t gi = kAbsentGeneration;
      ASSERT_TRUE(store->save(d, make_rich_state("dev-" + std::to_string(i)), kNow, gi).ok());
    }
    ASSERT_TRUE(store->remove(id_).ok());
    EXPECT_EQ(store->round_trips(), start + 2);  // staged, nothing sent yet
    ASSERT_TRUE(tx.commit().ok());
  }
  EXPECT_EQ(store->round_trips(), start + 3);
  {
    Transaction empty(*store);
    ASSERT_TRUE(empty.commit().ok());  // an empty unit costs nothing
  }
  EXPECT_EQ(store->round_trips(), start + 3);
}

TEST_F(RedisStore, KeysCarryThePrefixAndTheDeviceHashTag) {
  auto store = backend_.open_redis();
  std::uint64_t g = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, g).ok());
  const std::string key = backend_.prefix() + "dev2:{esp32-01}";
  EXPECT_EQ(store->key_of(id_), key);
  auto& server = RedisBackend::server();
  EXPECT_EQ(server.command({"HGET", key, "gen"}), "1");
  EXPECT_EQ(server.command({"HGET", key, "updated_ms"}), std::to_string(kNow));
  // Another prefix is another fleet: it does not see this device.
  RedisStoreOptions other = backend_.options();
  other.prefix = backend_.prefix() + "other:";
  std::string error;
  auto other_store = RedisSessionStore::open(other, error);
  ASSERT_NE(other_store, nullptr) << error;
  EdgeDeviceState out;
  ASSERT_TRUE(other_store->load(id_, out, g).ok());
  EXPECT_EQ(g, kAbsentGeneration);
}

TEST_F(RedisStore, HashesNotWrittenByTheStoreAreRefused) {
  auto store = backend_.open_redis();
  auto& server = RedisBackend::server();
  const std::string key = store->key_of(id_);
  EdgeDeviceState out;
  std::uint64_t g = 0;
  // A state without a generation, or with a non-numeric one: corrupt, generation unknown.
  server.command({"HSET", key, "state", "\x01"});
  StoreResult r = store->load(id_, out, g);
  EXPECT_EQ(r.status, StoreStatus::corrupt_state);
  EXPECT_EQ(r.codec, StateCodecError::inconsistent_state);
  server.command({"HSET", key, "gen", "x"});
  EXPECT_EQ(store->load(id_, out, g).status, StoreStatus::corrupt_state);
  g = kAnyGeneration;
  r = store->save(id_, make_rich_state(), kNow, g);  // the script refuses to count on "x"
  EXPECT_EQ(r.status, StoreStatus::storage_failure);
  EXPECT_NE(store->last_error().find("DSEKPBADGEN"), std::string::npos) << store->last_error();
  // A key of another type: a storage failure (Redis's WRONGTYPE), not a guess, and a commit
  // touching it writes nothing else either.
  server.command({"DEL", key});
  server.command({"SET", key, "not a hash"});
  EXPECT_EQ(store->load(id_, out, g).status, StoreStatus::storage_failure);
  {
    Transaction tx(*store);
    std::uint64_t g2 = kAbsentGeneration;
    ASSERT_TRUE(store->save(dev_id_of("fine-01"), make_rich_state("fine-01"), kNow, g2).ok());
    g = kAnyGeneration;
    ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, g).ok());
    EXPECT_EQ(tx.commit().status, StoreStatus::storage_failure);
  }
  EXPECT_EQ(server.command({"EXISTS", store->key_of(dev_id_of("fine-01"))}), "0");
}

TEST_F(RedisStore, LargestStateAndManyDevicesRoundTrip) {
  auto store = backend_.open_redis();
  const EdgeDeviceState largest = make_largest_state("big-01");
  std::vector<std::uint8_t> encoded;
  ASSERT_EQ(encode_device_state(largest, encoded), StateCodecError::ok);
  EXPECT_GT(encoded.size(), 1500u);
  std::uint64_t g = kAbsentGeneration;
  ASSERT_TRUE(store->save(dev_id_of("big-01"), largest, kNow, g).ok());
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(dev_id_of("big-01"), out, g).ok());
  expect_same_state(largest, out);

  constexpr int kDevices = 2000;
  const std::uint64_t before = store->round_trips();
  for (int i = 0; i < kDevices; ++i) {
    const std::string name = "fleet-" + std::to_string(i);
    EdgeDeviceState s = make_rich_state(name);
    s.next_session_serial = static_cast<std::uint32_t>(i);
    std::uint64_t gi = kAbsentGeneration;
    ASSERT_TRUE(store->save(dev_id_of(name), s, kNow, gi).ok()) << name;
  }
  for (int i = 0; i < kDevices; ++i) {
    const std::string name = "fleet-" + std::to_string(i);
    std::uint64_t gi = 0;
    ASSERT_TRUE(store->load(dev_id_of(name), out, gi).ok()) << name;
    ASSERT_EQ(gi, 1u);
    ASSERT_EQ(out.next_session_serial, static_cast<std::uint32_t>(i));
    ASSERT_EQ(out.dev_id.str(), name);
  }
  EXPECT_EQ(store->round_trips() - before, 2u * kDevices);
}

TEST_F(RedisStore, ScriptCacheFlushedIsReloadedOnce) {
  auto store = backend_.open_redis();
  EXPECT_EQ(RedisBackend::server().command({"SCRIPT", "FLUSH"}), "OK");
  std::uint64_t g = kAbsentGeneration;
  const std::uint64_t before = store->round_trips();
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, g).ok()) << store->last_error();
  EXPECT_EQ(g, 1u);
  EXPECT_EQ(store->round_trips() - before, 3u);  // NOSCRIPT, SCRIPT LOAD, EVALSHA
}

// make_durable() promises a power cut loses nothing only when Redis fsyncs each write before
// its reply (appendonly yes, appendfsync always): a ratcheting device's provisioned secret is
// erased only then (PROTOCOL.md 6.6). Anything else is refused with the setting named.
TEST_F(RedisStore, DurableOnlyWhenEveryWriteIsSyncedBeforeTheReply) {
  auto store = backend_.open_redis();
  EXPECT_TRUE(store->make_durable().ok()) << store->last_error();
  EXPECT_EQ(RedisBackend::server().command({"CONFIG", "SET", "appendfsync", "everysec"}), "OK");
  const StoreResult s = store->make_durable();
  EXPECT_EQ(s.status, StoreStatus::storage_failure);
  EXPECT_NE(s.message.find("appendfsync everysec"), std::string::npos) << s.message;
  EXPECT_EQ(RedisBackend::server().command({"CONFIG", "SET", "appendfsync", "always"}), "OK");
  EXPECT_TRUE(store->make_durable().ok()) << store->last_error();
  Transaction tx(*store);
  EXPECT_EQ(store->make_durable().status, StoreStatus::transaction_misuse);
}

TEST_F(RedisStore, UnreachableServerIsRefusedAtOpen) {
  RedisStoreOptions o = backend_.options();
  o.endpoint.port = 1;  // nothing listens there
  std::string error;
  EXPECT_EQ(RedisSessionStore::open(o, error), nullptr);
  EXPECT_NE(error.find("redis connect 127.0.0.1:1"), std::string::npos) << error;
  o = backend_.options();
  o.prefix = "bad{prefix";
  EXPECT_EQ(RedisSessionStore::open(o, error), nullptr);
  EXPECT_NE(error.find("'{'"), std::string::npos) << error;
}

TEST(RedisStoreUrl, ParsesHostPortAndPrefix) {
  RedisStoreOptions o;
  std::string error;
  ASSERT_TRUE(parse_redis_store_url("redis://10.0.0.5:6380/fleet1:", o, error)) << error;
  EXPECT_EQ(o.endpoint.host, "10.0.0.5");
  EXPECT_EQ(o.endpoint.port, 6380);
  EXPECT_EQ(o.prefix, "fleet1:");
  ASSERT_TRUE(parse_redis_store_url("redis://redis.local", o, error)) << error;
  EXPECT_EQ(o.endpoint.host, "redis.local");
  EXPECT_EQ(o.endpoint.port, 6379);
  EXPECT_EQ(o.prefix, "dsekp:");
  ASSERT_TRUE(parse_redis_store_url("redis://[::1]:7000/", o, error)) << error;
  EXPECT_EQ(o.endpoint.host, "::1");
  EXPECT_EQ(o.endpoint.port, 7000);
  EXPECT_EQ(o.prefix, "");
  for (const char* bad :
       {"http://x", "redis://", "redis://h:0", "redis://h:99999", "redis://h:", "redis://h:12x",
        "redis://u:p@h", "redis://@h", "redis://a@b@h", "redis://h/a{b}", "redis://[::1"}) {
    error.clear();
    EXPECT_FALSE(parse_redis_store_url(bad, o, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(RedisStoreUrl, AClusterUrlTakesTheReplicaWait) {
  RedisStoreOptions o;
  std::string error;
  ASSERT_TRUE(parse_redis_store_url("redis+cluster://h:7000/f:", o, error)) << error;
  EXPECT_EQ(o.cluster_wait.replicas, 1);  // the defaults
  EXPECT_EQ(o.cluster_wait.timeout_ms, 500);
  EXPECT_EQ(o.prefix, "f:");
  ASSERT_TRUE(parse_redis_store_url("redis+cluster://h:7000/f:?replicas=2&wait-ms=300", o, error))
      << error;
  EXPECT_EQ(o.cluster_wait.replicas, 2);
  EXPECT_EQ(o.cluster_wait.timeout_ms, 300);
  EXPECT_EQ(o.prefix, "f:");
  ASSERT_TRUE(parse_redis_store_url("redis+cluster://h:7000?wait-ms=200", o, error)) << error;
  EXPECT_EQ(o.cluster_wait.timeout_ms, 200);
  EXPECT_EQ(o.prefix, "dsekp:");
  for (const char* bad : {"redis+cluster://h?replicas=0", "redis+cluster://h?replicas=6",
                          "redis+cluster://h?wait-ms=0",
                          "redis+cluster://h?replicas=", "redis+cluster://h?replicas=1x",
                          "redis+cluster://h?foo=1", "redis+cluster://h?replicas"}) {
    RedisStoreOptions fresh;
    error.clear();
    EXPECT_FALSE(parse_redis_store_url(bad, fresh, error)) << bad;
    EXPECT_NE(error.find("replicas=1..5"), std::string::npos) << bad << ": " << error;
  }
  // One server has no replicas to wait for: the '?' stays part of the prefix there, as before.
  ASSERT_TRUE(parse_redis_store_url("redis://h/p?x", o, error)) << error;
  EXPECT_EQ(o.prefix, "p?x");
}

TEST(RedisStoreUrl, AClusterUrlNamesItsSeedNodes) {
  RedisStoreOptions o;
  std::string error;
  ASSERT_TRUE(parse_redis_store_url(
      "redis+cluster://edge-1@10.0.0.5:7000,10.0.0.6,[::1]:7002/f:", o, error))
      << error;
  const std::vector<std::pair<std::string, int>> seeds = {
      {"10.0.0.5", 7000}, {"10.0.0.6", 6379}, {"::1", 7002}};
  EXPECT_EQ(o.cluster_seeds, seeds);
  EXPECT_EQ(o.endpoint.username, "edge-1");
  EXPECT_EQ(o.prefix, "f:");
  EXPECT_EQ(o.nodes().size(), 3u);
  EXPECT_EQ(o.nodes()[2].username, "edge-1");  // every node's connection logs in alike
  ASSERT_TRUE(parse_redis_store_url("redis://10.0.0.5:6380/", o, error)) << error;
  EXPECT_TRUE(o.cluster_seeds.empty());  // one server again
  EXPECT_TRUE(is_redis_store_url("redis+cluster://h"));
  EXPECT_FALSE(is_redis_store_url("sqlite"));
  for (const char* bad : {"redis://a:1,b:2", "redis+cluster://", "redis+cluster://a:1,,b:2",
                          "redis+cluster://a:1,b:0", "redis+cluster://u:p@a:1"}) {
    error.clear();
    EXPECT_FALSE(parse_redis_store_url(bad, o, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

// A Redis Cluster node given as one server would answer MOVED for most keys: refused at open.
TEST(RedisStoreOpen, AClusterNodeAsOneServerIsRefused) {
  test::TempDir dir;
  engines::RedisServer node(dir.path().string(), {"--cluster-enabled", "yes",
                                                  "--cluster-config-file", dir.file("nodes.conf")});
  RedisStoreOptions o;
  o.endpoint.port = node.port();
  std::string error;
  EXPECT_EQ(RedisSessionStore::open(o, error), nullptr);
  EXPECT_NE(error.find("is a Redis Cluster node: use redis+cluster://"), std::string::npos)
      << error;
}

TEST(RedisStoreUrl, TakesTheAclUserButNeverAPassword) {
  RedisStoreOptions o;
  std::string error;
  ASSERT_TRUE(parse_redis_store_url("redis://edge-1@10.0.0.5:6380/fleet1:", o, error)) << error;
  EXPECT_EQ(o.endpoint.username, "edge-1");
  EXPECT_EQ(o.endpoint.host, "10.0.0.5");
  EXPECT_TRUE(o.endpoint.password.empty());
  EXPECT_FALSE(parse_redis_store_url("redis://edge-1:secret@h", o, error));
  EXPECT_NE(error.find("DSEKP_REDIS_PASSWORD"), std::string::npos) << error;
}

// The Redis that holds every session key with ACL users (the default user may only PING): the
// store logs in as its user with the password it was given; without it, or with a wrong one,
// it is refused at open with Redis's own reason, never left running blind.
TEST(RedisAcl, TheStoreLogsInAsItsUserAndIsRefusedWithoutThePassword) {
  test::TempDir dir;
  std::ofstream(dir.file("users.acl")) << "user default on nopass ~* &* -@all +ping\n"
                                          "user edge-1 on >s3cret-pw ~acl:* &* +@all\n";
  engines::RedisServer server(dir.path().string(), {"--aclfile", dir.file("users.acl")});
  RedisStoreOptions o;
  o.endpoint.port = server.port();
  o.endpoint.username = "edge-1";
  o.prefix = "acl:";
  std::string error;
  for (const char* wrong : {"", "not-the-password"}) {
    o.endpoint.password = wrong;
    EXPECT_EQ(RedisSessionStore::open(o, error), nullptr) << wrong;
    EXPECT_TRUE(error.find("NOPERM") != std::string::npos ||
                error.find("NOAUTH") != std::string::npos ||
                error.find("WRONGPASS") != std::string::npos)
        << error;
  }
  o.endpoint.password = "s3cret-pw";
  auto store = RedisSessionStore::open(o, error);
  ASSERT_NE(store, nullptr) << error;
  const DevId id = dev_id_of("esp32-01");
  EdgeDeviceState state;
  state.dev_id = id;
  std::uint64_t generation = kAbsentGeneration;
  ASSERT_TRUE(store->save(id, state, 1, generation).ok()) << store->last_error();
  EdgeDeviceState back;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(store->load(id, back, loaded).ok());
  EXPECT_EQ(loaded, generation);
  // A key outside the user's pattern is refused by Redis itself.
  o.prefix = "other:";
  auto outside = RedisSessionStore::open(o, error);
  std::uint64_t fresh = kAbsentGeneration;
  EXPECT_TRUE(outside == nullptr || !outside->save(id, state, 1, fresh).ok());
}

// Redis killed: every call fails with storage_failure within a bound, and while the
// connection backs off it fails without touching the network; restarted from its AOF, the
// committed state is there and calls succeed again (the script reloaded after NOSCRIPT).
class RedisKill : public ::testing::Test {
 protected:
  test::TempDir dir_;
  engines::RedisServer server_{dir_.path().string()};
  DevId id_ = dev_id_of("esp32-01");

  std::unique_ptr<RedisSessionStore> open() {
    RedisStoreOptions o;
    o.endpoint.port = server_.port();
    o.endpoint.command_timeout_ms = 500;
    o.endpoint.reconnect_min_ms = 20;
    o.endpoint.reconnect_max_ms = 200;
    o.prefix = "kill:";
    std::string error;
    auto store = RedisSessionStore::open(o, error);
    EXPECT_NE(store, nullptr) << error;
    return store;
  }
};

TEST_F(RedisKill, FailsClosedWhileDownAndContinuesAfterAofRestart) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  const EdgeDeviceState state = make_rich_state();
  std::uint64_t g = kAbsentGeneration;
  ASSERT_TRUE(store->save(id_, state, kNow, g).ok());
  {
    Transaction tx(*store);
    ASSERT_TRUE(store->save(id_, state, kNow + 1, g).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  ASSERT_EQ(g, 2u);

  server_.kill();
  EdgeDeviceState out;
  std::uint64_t loaded = 0;
  auto t0 = steady_clock::now();
  EXPECT_EQ(store->load(id_, out, loaded).status, StoreStatus::storage_failure);
  EXPECT_LT(steady_clock::now() - t0, milliseconds(3000));  // bound: the command timeout + slack
  EXPECT_FALSE(store->last_error().empty());
  // Backing off: the next calls fail at once without sending anything.
  const std::uint64_t sent = store->round_trips();
  EXPECT_EQ(store->load(id_, out, loaded).status, StoreStatus::storage_failure);
  std::uint64_t g2 = 2;
  {
    Transaction tx(*store);
    ASSERT_TRUE(store->save(id_, state, kNow + 2, g2).ok());
    EXPECT_EQ(tx.commit().status, StoreStatus::storage_failure);
  }
  EXPECT_EQ(store->round_trips(), sent);
  // Still down after the backoff: reconnect attempts fail, each within the connect timeout.
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(milliseconds(60));
    t0 = steady_clock::now();
    EXPECT_EQ(store->load(id_, out, loaded).status, StoreStatus::storage_failure);
    EXPECT_LT(steady_clock::now() - t0, milliseconds(3000));
  }

  server_.restart();
  StoreResult r{StoreStatus::storage_failure};
  const auto deadline = steady_clock::now() + std::chrono::seconds(5);
  while (!r.ok() && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
    r = store->load(id_, out, loaded);
  }
  ASSERT_TRUE(r.ok()) << store->last_error();
  EXPECT_EQ(loaded, 2u);  // the failed commit applied nothing
  expect_same_state(state, out);
  EXPECT_GE(store->connects(), 2u);
  ASSERT_TRUE(store->save(id_, state, kNow + 3, loaded).ok()) << store->last_error();
  EXPECT_EQ(loaded, 3u);
}

// A large commit sent to a server that was just killed: hiredis's second write meets a reset
// connection (EPIPE). The call must fail with storage_failure, not end the process by SIGPIPE.
TEST_F(RedisKill, ALargeCommitToAKilledServerFailsWithoutSigpipe) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  EdgeDeviceState out;
  std::uint64_t g = 0;
  ASSERT_TRUE(store->load(id_, out, g).ok());  // connected
  server_.kill();
  Transaction tx(*store);
  for (int i = 0; i < 300; ++i) {  // about 600 KB: many write(2) calls
    const std::string name = "big-" + std::to_string(i);
    std::uint64_t gi = kAbsentGeneration;
    ASSERT_TRUE(store->save(dev_id_of(name), make_largest_state(name), kNow, gi).ok());
  }
  EXPECT_EQ(tx.commit().status, StoreStatus::storage_failure);
  EXPECT_FALSE(store->last_error().empty());
}

}  // namespace
}  // namespace dsekp::edge::testing
