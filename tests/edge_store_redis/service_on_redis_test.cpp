// EdgeService on the shared Redis store, two edges (each its own service, Redis connection,
// local SQLite for the sink rows, as the daemon wires them), one registry: the uplink fast path
// is what the service actually uses. After a device's first frame at an edge (a miss: one state
// read), its frames cost one script run each and no save of the whole state (the device's
// generation stays where the handshake left it); frames accepted at one edge are replays at the
// other; the key-confirming frame still takes the full path.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "edge/service/edge_service.hpp"
#include "edge/store/redis/redis_credential_generations.hpp"
#include "edge/store/redis/split_session_store.hpp"
#include "store_backends.hpp"
#include "tests/edge_service/test_doubles.hpp"
#include "tests/support/scripted_device.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr std::string_view kInit = "dsekp/init";
constexpr std::string_view kData = "dsekp/data";
constexpr std::string_view kReadingJson = R"({"t":24.0,"h":51.0})";

struct ServiceEdge {
  ServiceEdge(RedisBackend& backend, DeviceRegistry& registry, const std::string& state_path,
              const EdgeServiceConfig& config = {}) {
    std::string error;
    local = SqliteSessionStore::open(state_path, {}, error);
    EXPECT_NE(local, nullptr) << error;
    redis = backend.open_redis();
    split = std::make_unique<SplitSessionStore>(*redis, *local);
    generations = std::make_unique<RedisCredentialGenerations>(*redis);
    sink.attach(local->connection());
    journal = DownlinkJournal::open(state_path + ".downlinks", error);
    EXPECT_NE(journal, nullptr) << error;
    service = std::make_unique<EdgeService>(
        EdgeServiceParts{registry, *split, *generations, sink, crypto, rng, journal.get()}, config);
  }
  HandleResult deliver(std::string_view topic, const Bytes& payload) {
    return service->handle(topic, payload, kNowMs, kNowMs * 1000);
  }

  std::unique_ptr<SqliteSessionStore> local;
  std::unique_ptr<RedisSessionStore> redis;
  std::unique_ptr<SplitSessionStore> split;
  std::unique_ptr<RedisCredentialGenerations> generations;
  std::unique_ptr<DownlinkJournal> journal;
  RecordingSink sink;
  OpenSslCrypto crypto;
  SeededRng rng{9};
  std::unique_ptr<EdgeService> service;
};

class ServiceOnRedis : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RedisBackend::start_server(); }
  static void TearDownTestSuite() { RedisBackend::stop_server(); }

  ServiceOnRedis() {
    const RegistryStatus s =
        DeviceRegistry::open(dir_.file("registry.db"), OpenMode::create_if_missing, registry_);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(registry_->add("esp32-01", material_).ok());
    a_ = std::make_unique<ServiceEdge>(backend_, *registry_, dir_.file("a.db"));
    b_ = std::make_unique<ServiceEdge>(backend_, *registry_, dir_.file("b.db"));
  }
  /// Handshake and confirmation through edge a; `copy` is the device's state in Redis then
  /// (what a Redis restored from an older copy would bring back).
  void confirm_and_copy_state(ScriptedDevice& device, const DevId& id, EdgeDeviceState& copy) {
    const HandleResult init = a_->deliver(kInit, device.init(Encoding::json));
    ASSERT_TRUE(init.ok()) << init.reason_name();
    ASSERT_EQ(device.take_ack(init.publishes[0].payload), Error::ok);
    ASSERT_TRUE(a_->deliver(kData, device.data(kReadingJson, kNowMs, Encoding::json)).ok());
    std::uint64_t loaded = 0;
    ASSERT_TRUE(a_->redis->load(id, copy, loaded).ok());
  }
  std::string generation() {
    return RedisBackend::server().command(
        {"HGET", a_->redis->key_of(dev_id_of("esp32-01")), "gen"});
  }

  RedisBackend backend_;
  test::TempDir dir_;
  std::unique_ptr<DeviceRegistry> registry_;
  DeviceMaterial material_;
  std::unique_ptr<ServiceEdge> a_;
  std::unique_ptr<ServiceEdge> b_;
};

TEST_F(ServiceOnRedis, FramesUnderEstablishedSessionsCostOneScriptRunAndNoStateSave) {
  ScriptedDevice device(material_, 3);
  const HandleResult init = a_->deliver(kInit, device.init(Encoding::json));
  ASSERT_TRUE(init.ok()) << init.reason_name();
  ASSERT_EQ(init.publishes.size(), 1u);
  ASSERT_EQ(device.take_ack(init.publishes[0].payload), Error::ok);
  // The key-confirming frame: the full path at B (a load, a conditional save of the state).
  const HandleResult confirm =
      b_->deliver(kData, device.data(kReadingJson, kNowMs, Encoding::json));
  ASSERT_TRUE(confirm.ok()) << confirm.reason_name();
  EXPECT_TRUE(confirm.session_confirmed);
  const std::string confirmed_generation = generation();

  std::vector<Bytes> frames;
  for (int i = 0; i < 20; ++i) frames.push_back(device.data(kReadingJson, kNowMs, Encoding::json));
  // A's first frame of this device is a miss: one state read, then the window operation only.
  std::uint64_t before = a_->redis->round_trips();
  ASSERT_TRUE(a_->deliver(kData, frames[0]).ok());
  EXPECT_EQ(a_->redis->round_trips() - before, 2u);  // HGETALL + the commit script
  for (std::size_t i = 1; i < frames.size(); ++i) {
    ServiceEdge& edge = i % 2 == 0 ? *a_ : *b_;
    before = edge.redis->round_trips();
    const HandleResult r = edge.deliver(kData, frames[i]);
    ASSERT_TRUE(r.ok()) << i << " " << r.reason_name();
    EXPECT_EQ(edge.redis->round_trips() - before, 1u) << "frame " << i;  // no state read
  }
  // No frame saved the whole state: the generation is the confirmation's.
  EXPECT_EQ(generation(), confirmed_generation);
  EXPECT_EQ(a_->sink.rows.size() + b_->sink.rows.size(), 1u + frames.size());
  // Every frame is a replay at either edge. An edge whose cache has not seen the other edge's
  // acceptance proposes it, the commit conflicts (a transient store failure: the daemon handles
  // the message again), and the second handling, on the reloaded window, refuses it.
  int retried = 0;
  for (const Bytes& f : frames) {
    for (ServiceEdge* edge : {a_.get(), b_.get()}) {
      HandleResult r = edge->deliver(kData, f);
      if (!r.processed()) {
        EXPECT_EQ(r.reason, EdgeReason::store_failure) << r.detail;
        ++retried;
        r = edge->deliver(kData, f);
      }
      EXPECT_EQ(r.error, Error::replay) << r.reason_name();
    }
  }
  EXPECT_GT(retried, 0);  // the stale caches were exercised
  EXPECT_LE(retried, static_cast<int>(frames.size()));
  EXPECT_EQ(a_->sink.rows.size() + b_->sink.rows.size(), 1u + frames.size());
}

// One garbage field in the shared store plus one unauthenticated frame naming that device: the
// device is quarantined (corrupt_state, final: no retry, no fail-stop), at both edges, while
// another device goes on at both; removing its hash (`dsekp keys reset-state`) frees it.
TEST_F(ServiceOnRedis, ACorruptStateQuarantinesOneDeviceWhileTheOthersFlow) {
  DeviceMaterial other_material;
  ASSERT_TRUE(registry_->add("esp32-02", other_material).ok());
  ScriptedDevice device(material_, 5);
  ScriptedDevice other(other_material, 6);
  for (ScriptedDevice* d : {&device, &other}) {
    const HandleResult init = a_->deliver(kInit, d->init(Encoding::json));
    ASSERT_TRUE(init.ok()) << init.reason_name();
    ASSERT_EQ(d->take_ack(init.publishes[0].payload), Error::ok);
    ASSERT_TRUE(a_->deliver(kData, d->data(kReadingJson, kNowMs, Encoding::json)).ok());
  }
  const std::string key = a_->redis->key_of(dev_id_of("esp32-01"));
  RedisBackend::server().command({"HSET", key, "state", "garbage"});
  Bytes forged = device.data(kReadingJson, kNowMs, Encoding::compact);
  forged.back() ^= 1;
  // B has never loaded the device: its first look at the state finds the garbage.
  const HandleResult r = b_->deliver(kData, forged);
  EXPECT_EQ(r.reason, EdgeReason::corrupt_state) << r.reason_name() << " " << r.detail;
  EXPECT_TRUE(r.processed());
  EXPECT_NE(r.detail.find("esp32-01"), std::string::npos) << r.detail;
  const HandleResult init = b_->deliver(kInit, device.init(Encoding::json, kNowS + 1));
  EXPECT_EQ(init.reason, EdgeReason::corrupt_state) << init.reason_name();
  for (int i = 0; i < 4; ++i) {
    ServiceEdge& edge = i % 2 == 0 ? *a_ : *b_;
    const HandleResult ok = edge.deliver(kData, other.data(kReadingJson, kNowMs, Encoding::json));
    EXPECT_TRUE(ok.ok()) << i << " " << ok.reason_name() << " " << ok.detail;
  }
  RedisBackend::server().command({"DEL", key});
  ScriptedDevice rebooted(material_, 7);
  const HandleResult again = b_->deliver(kInit, rebooted.init(Encoding::json, kNowS + 2));
  EXPECT_TRUE(again.ok()) << again.reason_name() << " " << again.detail;
}

// Redis restarted from an older copy (here: the device's state put back as it was before three
// downlinks): the next downlinks go on from the edge's downlink journal, never reusing a seq,
// and the device opens every one of them.
TEST_F(ServiceOnRedis, ARolledBackStateNeverReusesADownlinkSeq) {
  ScriptedDevice device(material_, 8);
  const DevId id = dev_id_of("esp32-01");
  EdgeDeviceState before;
  confirm_and_copy_state(device, id, before);

  std::set<std::uint32_t> seqs;
  const auto downlink = [&](const std::string& text, bool restored) {
    const HandleResult r = a_->service->send_downlink("esp32-01", bytes_of(text), kNowMs);
    ASSERT_TRUE(r.ok()) << r.reason_name() << " " << r.detail;
    EXPECT_EQ(r.downlink_seq_restored, restored) << r.detail;
    EXPECT_TRUE(seqs.insert(*r.downlink_seq).second) << "seq " << *r.downlink_seq << " twice";
    std::string opened;
    EXPECT_EQ(device.open_down(r.publishes[0].payload, opened), Error::ok) << text;
  };
  for (const char* text : {"one", "two", "three"}) downlink(text, false);
  std::uint64_t any = kAnyGeneration;
  ASSERT_TRUE(a_->redis->save(id, before, kNowMs, any).ok());  // the older copy is back
  a_->redis->forget(id);
  downlink("four", true);
  downlink("five", false);
  EXPECT_EQ(seqs, (std::set<std::uint32_t>{0, 1, 2, 3, 4}));
}

// Two edges on one Redis, each with its own journal: after Redis went back to an older copy
// neither journal knows what the other edge sealed. In lanes 0/2 and 1/2 their seqs can never
// meet (with both in lane 0/1, edge a's next seq after the rollback is one b already used).
TEST_F(ServiceOnRedis, EdgesInTheirOwnLanesNeverShareADownlinkSeqAfterARollback) {
  EdgeServiceConfig lane0;
  lane0.downlink_lane = DownlinkLane{0, 2};
  EdgeServiceConfig lane1;
  lane1.downlink_lane = DownlinkLane{1, 2};
  a_ = std::make_unique<ServiceEdge>(backend_, *registry_, dir_.file("lane0.db"), lane0);
  b_ = std::make_unique<ServiceEdge>(backend_, *registry_, dir_.file("lane1.db"), lane1);
  ScriptedDevice device(material_, 9);
  const DevId id = dev_id_of("esp32-01");
  EdgeDeviceState before;
  confirm_and_copy_state(device, id, before);

  std::set<std::uint32_t> seqs;
  const auto downlink = [&](ServiceEdge& edge, const std::string& text) {
    const HandleResult r = edge.service->send_downlink("esp32-01", bytes_of(text), kNowMs);
    ASSERT_TRUE(r.ok()) << r.reason_name() << " " << r.detail;
    EXPECT_EQ(*r.downlink_seq % 2, &edge == a_.get() ? 0u : 1u) << "outside its lane";
    EXPECT_TRUE(seqs.insert(*r.downlink_seq).second) << "seq " << *r.downlink_seq << " twice";
    std::string opened;
    EXPECT_EQ(device.open_down(r.publishes[0].payload, opened), Error::ok) << text;
    EXPECT_EQ(opened, text);
  };
  downlink(*a_, "a one");
  downlink(*b_, "b one");
  downlink(*b_, "b two");
  downlink(*a_, "a two");
  std::uint64_t any = kAnyGeneration;
  ASSERT_TRUE(a_->redis->save(id, before, kNowMs, any).ok());  // the older copy is back
  a_->redis->forget(id);
  b_->redis->forget(id);
  downlink(*a_, "a after the rollback");
  downlink(*b_, "b after the rollback");
  downlink(*a_, "a again");
  EXPECT_EQ(seqs.size(), 7u);
}

}  // namespace
}  // namespace dsekp::edge::testing
