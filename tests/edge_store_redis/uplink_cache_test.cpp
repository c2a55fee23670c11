// The Redis store's uplink fast path (edge/store/uplink_session_cache.hpp) and the window field
// it works on (edge/store/redis/redis_window_field.hpp): the field form holds exactly the core's
// ReplayWindow, the commit script's window operation decides exactly as the core's window does
// (a randomized comparison with two edges, each with its own cache, against one reference
// window), a batch of frames under cached keys costs one round trip, and a session removed or
// replaced by another edge is refused at commit and forgotten.
#include <gtest/gtest.h>

#include <random>

#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/device_session.hpp"
#include "edge/store/redis/redis_window_field.hpp"
#include "store_backends.hpp"

namespace dsekp::edge::testing {
namespace {

using redis::decode_window_field;
using redis::encode_window_field;
using redis::WindowFieldMatch;

constexpr std::uint64_t kNow = 1'764'460'800'000u;
constexpr std::uint64_t kCred = 3;  // the registry credential generation the tests record

std::uint32_t draw(std::mt19937& rng) {
  return static_cast<std::uint32_t>(rng());
}

// Accepts random seqs around a moving top, with occasional jumps past the whole ring.
ReplayWindow random_window(std::uint32_t size, std::mt19937& rng, int accepts) {
  ReplayWindow w(size);
  std::uint32_t top = 0;
  for (int i = 0; i < accepts; ++i) {
    const std::uint32_t r = draw(rng) % 100;
    const std::uint32_t seq = r < 3    ? top + 900 + draw(rng) % 2000
                              : r < 60 ? top + draw(rng) % 4
                                       : (top > 70 ? top - draw(rng) % 70 : draw(rng) % 8);
    if (w.accept(seq) == Error::ok && seq >= top) top = seq + 1;
  }
  return w;
}

TEST(RedisWindowField, EveryWindowReadsBackBitForBitUnderItsOwnTagOnly) {
  std::mt19937 rng(7);  // 32-bit results: draw(rng) fits std::uint32_t
  for (const std::uint32_t size : {1u, 63u, 64u, 65u, 300u, 1024u}) {
    for (int round = 0; round < 40; ++round) {
      const ReplayWindow w = random_window(size, rng, round * 10);
      const std::string tag(32, 'a');
      const std::string field = encode_window_field(tag, w);
      ASSERT_EQ(field.size(), redis::kWindowFieldSize);
      ReplayWindow back(size);
      ASSERT_EQ(decode_window_field(field, tag, back), WindowFieldMatch::same_session);
      EXPECT_EQ(back.top(), w.top()) << size;
      EXPECT_EQ(back.bitmap(), w.bitmap()) << size << " round " << round;
      ReplayWindow untouched(size);
      EXPECT_EQ(decode_window_field(field, std::string(32, 'b'), untouched),
                WindowFieldMatch::other_session);
      EXPECT_EQ(untouched.top(), 0u);
    }
  }
}

TEST(RedisWindowField, MalformedValuesAreRecognised) {
  const std::string tag(32, 'c');
  ReplayWindow w(64);
  const std::string good = encode_window_field(tag, w);
  EXPECT_EQ(decode_window_field(good.substr(1), tag, w), WindowFieldMatch::malformed);
  std::string letters = good;
  letters[40] = 'x';
  EXPECT_EQ(decode_window_field(letters, tag, w), WindowFieldMatch::malformed);
  std::string beyond = good;
  beyond.replace(32, 10, "4294967297");  // top > 2^32: no 32-bit seq gets there
  EXPECT_EQ(decode_window_field(beyond, tag, w), WindowFieldMatch::malformed);
  beyond.replace(32, 10, "4294967296");
  EXPECT_EQ(decode_window_field(beyond, tag, w), WindowFieldMatch::same_session);
  EXPECT_EQ(w.top(), std::uint64_t{1} << 32);
}

TEST(RedisWindowField, TagsNameTheKeysAndNewlyAcceptedListsTheDifference) {
  const EdgeSession a = make_session(9, 64, {}, 1);
  const EdgeSession b = make_session(9, 64, {}, 2);  // same sessctr, other keys
  EXPECT_EQ(redis::session_tag(a).size(), 32u);
  EXPECT_EQ(redis::session_tag(a), redis::session_tag(make_session(9, 64, {1, 2}, 1)));
  EXPECT_NE(redis::session_tag(a), redis::session_tag(b));
  ReplayWindow before(64), after(64);
  for (const std::uint32_t s : {3u, 5u, 6u}) {
    ASSERT_EQ(before.accept(s), Error::ok);
    ASSERT_EQ(after.accept(s), Error::ok);
  }
  for (const std::uint32_t s : {4u, 40u, 9u}) ASSERT_EQ(after.accept(s), Error::ok);
  EXPECT_EQ(redis::newly_accepted(before, after), (std::vector<std::uint32_t>{4, 9, 40}));
  EXPECT_TRUE(redis::newly_accepted(after, after).empty());
}

class UplinkCache : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RedisBackend::start_server(); }
  static void TearDownTestSuite() { RedisBackend::stop_server(); }

  // Stores a device with one established session (window of `size`) and its cred record, the
  // way the service commits a confirmed session.
  void store_device(RedisSessionStore& store, const EdgeSession& session) {
    EdgeDeviceState s;
    s.dev_id = id_;
    s.established[0] = make_session(session.sessctr, session.uplink_window.size(), {}, seed_);
    s.established_count = 1;
    EdgeDeviceState current;
    std::uint64_t g = 0;
    ASSERT_TRUE(store.load(id_, current, g).ok());
    Transaction tx(store);
    ASSERT_TRUE(store.save(id_, s, kNow, g).ok());
    ASSERT_TRUE(store.stage_credential(id_, kCred).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  // The cached session, loading the device first if the cache does not hold it.
  EdgeSession* cached(RedisSessionStore& store, std::uint16_t sessctr) {
    if (EdgeSession* s = store.find_session(id_, sessctr, kCred)) return s;
    EdgeDeviceState state;
    std::uint64_t g = 0;
    EXPECT_TRUE(store.load(id_, state, g).ok());
    return store.find_session(id_, sessctr, kCred);
  }

  RedisBackend backend_;
  DevId id_ = dev_id_of("esp32-07");
  std::uint8_t seed_ = 5;
};

// Two edges, each accepting random seqs in batches through its own cache, against one
// reference ReplayWindow that plays the truth: every refusal of a cache is a refusal of the
// reference, and a batch commits if and only if the reference accepts all its seqs in order.
TEST_F(UplinkCache, WindowOperationsDecideExactlyAsTheCoreWindowAcrossTwoEdges) {
  std::mt19937 rng(11);
  for (const std::uint32_t size : {1u, 64u, 65u, 1024u}) {
    id_ = dev_id_of("dev-w" + std::to_string(size));
    auto a = backend_.open_redis();
    auto b = backend_.open_redis();
    store_device(*a, make_session(4, size, {}, seed_));
    ReplayWindow truth(size);
    std::uint32_t center = 0;
    int committed = 0, conflicts = 0, refused_locally = 0;
    for (int batch = 0; batch < 400; ++batch) {
      RedisSessionStore& edge = draw(rng) % 2 == 0 ? *a : *b;
      Transaction tx(edge);
      EdgeSession* session = cached(edge, 4);
      ASSERT_NE(session, nullptr);
      std::vector<std::uint32_t> staged;
      ReplayWindow known = truth;  // the shared window plus what this batch staged so far
      const int frames = 1 + static_cast<int>(draw(rng) % 4);
      for (int f = 0; f < frames; ++f) {
        const std::uint32_t r = draw(rng) % 100;
        std::uint32_t seq = center + draw(rng) % 3;
        if (r < 2)
          seq = center + 1000 + draw(rng) % 2000;  // past the whole ring
        else if (r < 30)
          seq = center > size + 5 ? center - draw(rng) % (size + 5) : draw(rng) % 4;
        if (seq >= center) center = seq + 1;
        if (session->uplink_window.accept(seq) != Error::ok) {
          ++refused_locally;
          EXPECT_NE(known.check(seq), Error::ok) << "a cache refused what the shared window lacks";
          continue;
        }
        ASSERT_TRUE(edge.stage_accept(id_, *session, seq).ok());
        staged.push_back(seq);
        (void)known.accept(seq);
      }
      ReplayWindow expect = truth;
      bool all_new = true;
      for (const std::uint32_t seq : staged) all_new = all_new && expect.accept(seq) == Error::ok;
      const StoreResult r = tx.commit();
      if (all_new) {
        ASSERT_TRUE(r.ok()) << "size " << size << " batch " << batch;
        truth = expect;
        committed += staged.empty() ? 0 : 1;
      } else {
        ASSERT_EQ(r.status, StoreStatus::generation_conflict) << "size " << size;
        EXPECT_EQ(edge.find_session(id_, 4, kCred), nullptr) << "a failed commit keeps the cache";
        ++conflicts;
      }
    }
    EdgeDeviceState stored;
    std::uint64_t g = 0;
    ASSERT_TRUE(backend_.open_redis()->load(id_, stored, g).ok());
    ASSERT_EQ(stored.established_count, 1u);
    EXPECT_EQ(stored.established[0].uplink_window.top(), truth.top()) << size;
    EXPECT_EQ(stored.established[0].uplink_window.bitmap(), truth.bitmap()) << size;
    EXPECT_GT(committed, 100) << size;
    EXPECT_GT(conflicts, 5) << size;  // the stale cache of the other edge is exercised
    std::printf("window %u: %d batches committed, %d conflicts, %d refused from a cache\n", size,
                committed, conflicts, refused_locally);
  }
}

TEST_F(UplinkCache, ABatchUnderCachedKeysIsOneRoundTripAndTheOtherEdgeSeesEverySeq) {
  auto a = backend_.open_redis();
  auto b = backend_.open_redis();
  store_device(*a, make_session(1, 64, {}, seed_));
  ASSERT_NE(cached(*a, 1), nullptr);
  const std::uint64_t before = a->round_trips();
  {
    Transaction tx(*a);
    for (std::uint32_t seq = 0; seq < 50; ++seq) {
      EdgeSession* s = a->find_session(id_, 1, kCred);
      ASSERT_NE(s, nullptr);
      ASSERT_EQ(s->uplink_window.accept(seq), Error::ok);
      ASSERT_TRUE(a->stage_accept(id_, *s, seq).ok());
    }
    ASSERT_TRUE(tx.commit().ok());
  }
  EXPECT_EQ(a->round_trips(), before + 1);  // no load, one script run for 50 frames
  EdgeSession* at_b = cached(*b, 1);
  ASSERT_NE(at_b, nullptr);
  for (std::uint32_t seq = 0; seq < 50; ++seq)
    EXPECT_EQ(at_b->uplink_window.check(seq), Error::replay) << seq;
  EXPECT_EQ(at_b->uplink_window.check(50), Error::ok);
  // A stale credential generation is a miss: the full path then drops the old state.
  EXPECT_EQ(b->find_session(id_, 1, kCred + 1), nullptr);
}

TEST_F(UplinkCache, ASessionRemovedOrReplacedElsewhereIsRefusedAtCommitAndForgotten) {
  auto a = backend_.open_redis();
  auto b = backend_.open_redis();
  store_device(*a, make_session(2, 64, {}, seed_));
  ASSERT_NE(cached(*a, 2), nullptr);
  // Another edge replaces the session by a new one with the same sessctr (a rebooted device):
  // other keys, so another tag.
  seed_ = 6;
  store_device(*b, make_session(2, 64, {}, seed_));
  {
    Transaction tx(*a);
    EdgeSession* s = a->find_session(id_, 2, kCred);
    ASSERT_NE(s, nullptr);  // A does not know yet
    ASSERT_EQ(s->uplink_window.accept(0), Error::ok);
    ASSERT_TRUE(a->stage_accept(id_, *s, 0).ok());
    EXPECT_EQ(tx.commit().status, StoreStatus::generation_conflict);
  }
  EXPECT_EQ(a->find_session(id_, 2, kCred), nullptr);
  EdgeSession* fresh = cached(*a, 2);  // reloaded: the new session's keys
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(redis::session_tag(*fresh), redis::session_tag(make_session(2, 64, {}, 6)));
  EXPECT_EQ(fresh->uplink_window.top(), 0u);
  // Another edge removes the device (its credential was rotated).
  ASSERT_TRUE(b->remove(id_).ok());
  Transaction tx(*a);
  ASSERT_EQ(fresh->uplink_window.accept(0), Error::ok);
  ASSERT_TRUE(a->stage_accept(id_, *fresh, 0).ok());
  EXPECT_EQ(tx.commit().status, StoreStatus::generation_conflict);
  EXPECT_EQ(a->find_session(id_, 2, kCred), nullptr);
}

// A commit that conflicts on one device puts the other devices' cached windows back as they were
// before the transaction (nothing of it was written) and forgets only the device that conflicted:
// handled again, the stale frame is a replay and the others are accepted without a reload.
TEST_F(UplinkCache, AConflictForgetsOnlyTheConflictingDeviceAndRestoresTheOthers) {
  auto a = backend_.open_redis();
  auto b = backend_.open_redis();
  const DevId x = dev_id_of("dev-x");
  const DevId y = dev_id_of("dev-y");
  id_ = x;
  store_device(*a, make_session(1, 64, {}, seed_));
  id_ = y;
  store_device(*a, make_session(1, 64, {}, seed_));
  for (const DevId& d : {x, y}) {
    id_ = d;
    ASSERT_NE(cached(*a, 1), nullptr);
  }
  {
    id_ = y;
    Transaction tx(*b);  // B accepts Y's seq 3 first
    EdgeSession* s = cached(*b, 1);
    ASSERT_EQ(s->uplink_window.accept(3), Error::ok);
    ASSERT_TRUE(b->stage_accept(y, *s, 3).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  const auto stage = [&](const DevId& d, std::uint32_t seq) {
    EdgeSession* s = a->find_session(d, 1, kCred);
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(s->uplink_window.accept(seq), Error::ok);
    ASSERT_TRUE(a->stage_accept(d, *s, seq).ok());
  };
  {
    Transaction tx(*a);
    stage(x, 1);
    stage(y, 3);  // A's cache is behind: it accepts what B has accepted
    EXPECT_EQ(tx.commit().status, StoreStatus::generation_conflict);
  }
  EXPECT_EQ(a->find_session(y, 1, kCred), nullptr);  // reloaded on its next frame
  EdgeSession* xs = a->find_session(x, 1, kCred);
  ASSERT_NE(xs, nullptr);                            // kept, its window as before
  EXPECT_EQ(xs->uplink_window.check(1), Error::ok);  // seq 1 was not written
  const std::uint64_t before = a->round_trips();
  {
    Transaction tx(*a);
    stage(x, 1);
    id_ = y;
    EdgeSession* ys = cached(*a, 1);  // the conflicting device, loaded again
    ASSERT_NE(ys, nullptr);
    EXPECT_EQ(ys->uplink_window.check(3), Error::replay);
    ASSERT_TRUE(tx.commit().ok());
  }
  EXPECT_EQ(a->round_trips(), before + 2);  // Y's load and the commit
}

TEST_F(UplinkCache, UndoingASavepointOrASaveForgetsTheDevice) {
  auto a = backend_.open_redis();
  store_device(*a, make_session(3, 64, {}, seed_));
  {
    Transaction tx(*a);
    EdgeSession* s = cached(*a, 3);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(a->savepoint().ok());
    ASSERT_EQ(s->uplink_window.accept(7), Error::ok);
    ASSERT_TRUE(a->stage_accept(id_, *s, 7).ok());
    ASSERT_TRUE(a->rollback_to_savepoint().ok());
    EXPECT_EQ(a->find_session(id_, 3, kCred), nullptr);  // its window held 7, which is undone
    ASSERT_TRUE(tx.commit().ok());
  }
  EdgeSession* s = cached(*a, 3);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->uplink_window.check(7), Error::ok);  // 7 was never accepted
  // Outside a transaction nothing can be staged, and the device is forgotten.
  ASSERT_EQ(s->uplink_window.accept(7), Error::ok);
  EXPECT_EQ(a->stage_accept(id_, *s, 7).status, StoreStatus::transaction_misuse);
  EXPECT_EQ(a->find_session(id_, 3, kCred), nullptr);
  // A save (the full path) forgets the device too: its sessions may change.
  EdgeDeviceState state;
  std::uint64_t g = 0;
  ASSERT_TRUE(a->load(id_, state, g).ok());
  ASSERT_NE(a->find_session(id_, 3, kCred), nullptr);
  ASSERT_TRUE(a->save(id_, state, kNow, g).ok());
  EXPECT_EQ(a->find_session(id_, 3, kCred), nullptr);
}

// A full-path load inside the transaction sees what the transaction's accepts staged, so a
// duplicate later in the same batch is refused as a replay by the core rather than failing the
// commit; and the cache keeps the uplink keys only.
TEST_F(UplinkCache, LoadsInsideTheTransactionSeeItsStagedAccepts) {
  auto a = backend_.open_redis();
  store_device(*a, make_session(6, 64, {}, seed_));
  Transaction tx(*a);
  EdgeSession* s = cached(*a, 6);
  ASSERT_NE(s, nullptr);
  const auto bytes = [](const AeadKey& k) {
    return std::vector<std::uint8_t>(k.view().begin(), k.view().end());
  };
  EXPECT_EQ(bytes(s->keys.down.key), bytes(AeadKey{}));  // not kept in the cache
  EXPECT_EQ(bytes(s->keys.up.key), bytes(make_session(6, 64, {}, seed_).keys.up.key));
  ASSERT_EQ(s->uplink_window.accept(5), Error::ok);
  ASSERT_TRUE(a->stage_accept(id_, *s, 5).ok());
  EdgeDeviceState state;
  std::uint64_t g = 0;
  ASSERT_TRUE(a->load(id_, state, g).ok());
  EXPECT_EQ(state.established[0].uplink_window.check(5), Error::replay);
  ASSERT_EQ(state.established[0].uplink_window.accept(6), Error::ok);  // the full path's frame
  ASSERT_TRUE(a->save(id_, state, kNow, g).ok());
  ASSERT_TRUE(tx.commit().ok());
  EdgeDeviceState stored;
  ASSERT_TRUE(backend_.open_redis()->load(id_, stored, g).ok());
  EXPECT_EQ(stored.established[0].uplink_window.check(5), Error::replay);
  EXPECT_EQ(stored.established[0].uplink_window.check(6), Error::replay);
}

// The window field is authoritative: a state whose established session has no field, or a field
// that does not decode or names another session, is refused (never judged on the blob's copy).
TEST_F(UplinkCache, AMissingOrForeignWindowFieldMakesTheStateCorrupt) {
  auto a = backend_.open_redis();
  store_device(*a, make_session(8, 64, {}, seed_));
  const std::string key = a->key_of(id_);
  auto& server = RedisBackend::server();
  const std::string good = server.command({"HGET", key, "w:8"});
  ASSERT_EQ(good.size(), redis::kWindowFieldSize);
  EdgeDeviceState state;
  std::uint64_t g = 0;
  const auto load_status = [&] { return backend_.open_redis()->load(id_, state, g).status; };
  ASSERT_EQ(load_status(), StoreStatus::ok);
  std::string foreign = good;
  foreign[0] = foreign[0] == 'f' ? 'e' : 'f';
  std::string padded = good;
  padded.replace(32, 10, "    123456");  // not ten digits: C++ and the script both refuse it
  for (const std::string& bad : {foreign, padded, good.substr(0, 100)}) {
    server.command({"HSET", key, "w:8", bad});
    EXPECT_EQ(load_status(), StoreStatus::corrupt_state);
  }
  // The script refuses to move such a field too: a cached session's accept conflicts.
  server.command({"HSET", key, "w:8", good});
  EdgeSession* s = cached(*a, 8);
  ASSERT_NE(s, nullptr);
  server.command({"HSET", key, "w:8", padded});
  {
    Transaction tx(*a);
    ASSERT_EQ(s->uplink_window.accept(1), Error::ok);
    ASSERT_TRUE(a->stage_accept(id_, *s, 1).ok());
    EXPECT_EQ(tx.commit().status, StoreStatus::generation_conflict);
  }
  server.command({"HDEL", key, "w:8"});
  EXPECT_EQ(load_status(), StoreStatus::corrupt_state);
}

// A save of the full path adds its own acceptances to the window field; it never writes the
// window back whole, which would undo what another edge accepted meanwhile.
TEST_F(UplinkCache, AFullSaveMergesIntoTheWindowOtherEdgesMoved) {
  auto a = backend_.open_redis();
  auto b = backend_.open_redis();
  store_device(*a, make_session(5, 64, {}, seed_));
  EdgeDeviceState at_a;
  std::uint64_t ga = 0;
  ASSERT_TRUE(a->load(id_, at_a, ga).ok());
  {
    Transaction tx(*b);  // B accepts seq 10 through its cache
    EdgeSession* s = cached(*b, 5);
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(s->uplink_window.accept(10), Error::ok);
    ASSERT_TRUE(b->stage_accept(id_, *s, 10).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  ASSERT_EQ(at_a.established[0].uplink_window.accept(11), Error::ok);  // A, the full way
  {
    Transaction tx(*a);
    ASSERT_TRUE(a->save(id_, at_a, kNow, ga).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  EdgeDeviceState stored;
  std::uint64_t g = 0;
  ASSERT_TRUE(backend_.open_redis()->load(id_, stored, g).ok());
  EXPECT_EQ(stored.established[0].uplink_window.check(10), Error::replay);
  EXPECT_EQ(stored.established[0].uplink_window.check(11), Error::replay);
  // And a full save of a seq another edge accepted meanwhile conflicts.
  ASSERT_TRUE(a->load(id_, at_a, ga).ok());
  {
    Transaction tx(*b);
    EdgeSession* s = cached(*b, 5);
    ASSERT_EQ(s->uplink_window.accept(12), Error::ok);
    ASSERT_TRUE(b->stage_accept(id_, *s, 12).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  ASSERT_EQ(at_a.established[0].uplink_window.accept(12), Error::ok);
  Transaction tx(*a);
  ASSERT_TRUE(a->save(id_, at_a, kNow, ga).ok());
  EXPECT_EQ(tx.commit().status, StoreStatus::generation_conflict);
}

}  // namespace
}  // namespace dsekp::edge::testing
