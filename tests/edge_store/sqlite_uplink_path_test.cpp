// The SQLite store's uplink fast path (UplinkSessionCache on SqliteSessionStore): a session is
// handed out only from a state the open transaction has saved and checked against the
// registry's credential generation; a window moved in it is committed with the batch, and put
// back by an undone savepoint, by forget(), or by the end of the transaction without a commit.
// With SqliteStoreOptions::cached_devices the committed states serve the next transactions,
// until another connection writes or a transaction fails to commit.
// The calls follow EdgeService::on_cached_data: find, the core's accept, savepoint, stage.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "edge/store/sqlite_session_store.hpp"
#include "store_test_support.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr std::uint64_t kNow = 1'764'460'800'000;
constexpr std::uint64_t kCred = 7;
constexpr std::uint16_t kSessctr = 2;  // make_rich_state: window of 64, holds 0, 1, 2, 40, 63

class SqliteUplinkPath : public ::testing::Test {
 protected:
  void SetUp() override {
    reopen({});
    std::uint64_t generation = kAnyGeneration;
    ASSERT_TRUE(store_->save(id_, make_rich_state(), kNow, generation).ok());
  }

  void reopen(const SqliteStoreOptions& options) {
    store_.reset();
    std::string error;
    store_ = SqliteSessionStore::open(dir_.file("edge.db"), options, error);
    ASSERT_NE(store_, nullptr) << error;
  }

  // What the full path leaves behind for a device: its state loaded, saved in the open
  // transaction, and checked against credential generation `cred`.
  void save_and_check(std::uint64_t cred = kCred) {
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    ASSERT_TRUE(store_->load(id_, state, generation).ok());
    ASSERT_TRUE(store_->save(id_, state, kNow, generation).ok());
    store_->note_checked(id_, cred);
  }

  // The core's part: the frame opened and its seq accepted into the handed-out window.
  static void accept(EdgeSession& session, std::uint32_t seq, std::uint64_t now_ms) {
    ASSERT_EQ(session.uplink_window.accept(seq), Error::ok);
    session.last_seen_ms = now_ms;
  }

  // One DATA frame through the fast path, its savepoint released (kept in the batch).
  void accept_on_fast_path(std::uint32_t seq, std::uint64_t now_ms = kNow + 5) {
    EdgeSession* session = store_->find_session(id_, kSessctr, kCred);
    ASSERT_NE(session, nullptr);
    accept(*session, seq, now_ms);
    ASSERT_TRUE(store_->savepoint().ok());
    ASSERT_TRUE(store_->stage_accept(id_, *session, seq).ok());
    ASSERT_TRUE(store_->release_savepoint().ok());
  }

  // The window of session kSessctr as the database holds it (outside a transaction).
  EdgeSession stored_session() {
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    EXPECT_TRUE(store_->load(id_, state, generation).ok());
    EdgeSession out;
    for (std::uint32_t i = 0; i < state.established_count; ++i)
      if (state.established[i].sessctr == kSessctr) out = std::move(state.established[i]);
    return out;
  }

  TempDir dir_;
  DevId id_ = dev_id_of("esp32-01");
  std::unique_ptr<SqliteSessionStore> store_;
};

TEST_F(SqliteUplinkPath, HandsOutOnlyASessionOfAStateCheckedInThisTransaction) {
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr) << "outside a transaction";
  ASSERT_TRUE(store_->begin().ok());
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr) << "not read yet";
  EdgeDeviceState state;
  std::uint64_t generation = 0;
  ASSERT_TRUE(store_->load(id_, state, generation).ok());
  ASSERT_TRUE(store_->save(id_, state, kNow, generation).ok());
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr) << "saved, but not checked";
  store_->note_checked(id_, kCred);
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred + 1), nullptr) << "other credentials";
  EXPECT_EQ(store_->find_session(id_, 9, kCred), nullptr) << "no such session";
  EXPECT_EQ(store_->find_session(id_, 0xBEEF, kCred), nullptr) << "the pending one";
  EXPECT_EQ(store_->find_session(dev_id_of("esp32-02"), kSessctr, kCred), nullptr);
  EdgeSession* session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->sessctr, kSessctr);
  store_->forget(id_);
  ASSERT_TRUE(store_->commit().ok());
}

TEST_F(SqliteUplinkPath, AStagedWindowIsCommittedWithTheTransaction) {
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  accept_on_fast_path(50, kNow + 5);
  accept_on_fast_path(51, kNow + 6);
  ASSERT_TRUE(store_->commit().ok());
  const EdgeSession stored = stored_session();
  EXPECT_EQ(stored.uplink_window.check(50), Error::replay);
  EXPECT_EQ(stored.uplink_window.check(51), Error::replay);
  EXPECT_EQ(stored.uplink_window.check(52), Error::ok);
  EXPECT_EQ(stored.last_seen_ms, kNow + 6);
}

TEST_F(SqliteUplinkPath, AnUndoneSavepointPutsTheWindowBack) {
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  accept_on_fast_path(50);
  const std::uint64_t seen = store_->find_session(id_, kSessctr, kCred)->last_seen_ms;
  store_->forget(id_);
  EdgeSession* session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr);
  accept(*session, 51, kNow + 9);
  ASSERT_TRUE(store_->savepoint().ok());
  ASSERT_TRUE(store_->stage_accept(id_, *session, 51).ok());
  ASSERT_TRUE(store_->rollback_to_savepoint().ok());  // e.g. its row was refused
  session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->uplink_window.check(51), Error::ok) << "a redelivery must be accepted";
  EXPECT_EQ(session->uplink_window.check(50), Error::replay) << "the kept frame stays";
  EXPECT_EQ(session->last_seen_ms, seen);
  store_->forget(id_);
  ASSERT_TRUE(store_->commit().ok());
  EXPECT_EQ(stored_session().uplink_window.check(51), Error::ok);
  EXPECT_EQ(stored_session().uplink_window.check(50), Error::replay);
}

TEST_F(SqliteUplinkPath, ForgettingAnUnstagedSessionPutsItsWindowBack) {
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  EdgeSession* session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr);
  const std::uint64_t seen = session->last_seen_ms;
  accept(*session, 50, kNow + 9);
  store_->forget(id_);  // e.g. the unit could not begin
  EdgeDeviceState loaded;
  std::uint64_t generation = 0;
  ASSERT_TRUE(store_->load(id_, loaded, generation).ok());  // the transaction's own view
  EXPECT_EQ(loaded.established[1].uplink_window.check(50), Error::ok);
  session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->uplink_window.check(50), Error::ok);
  EXPECT_EQ(session->last_seen_ms, seen);
  store_->forget(id_);
  ASSERT_TRUE(store_->commit().ok());
  EXPECT_EQ(stored_session().uplink_window.check(50), Error::ok);
}

TEST_F(SqliteUplinkPath, AWindowNotStagedDoesNotReachTheCommit) {
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  EdgeSession* session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr);
  accept(*session, 50, kNow + 9);
  ASSERT_TRUE(store_->commit().ok());  // a caller that neither staged nor forgot
  EXPECT_EQ(stored_session().uplink_window.check(50), Error::ok);
  // A stage for a seq the window does not hold is refused, and the window put back.
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(store_->savepoint().ok());
  EXPECT_EQ(store_->stage_accept(id_, *session, 52).status, StoreStatus::transaction_misuse);
  ASSERT_TRUE(store_->release_savepoint().ok());
  ASSERT_TRUE(store_->commit().ok());
  EXPECT_EQ(stored_session().uplink_window.check(52), Error::ok);
}

TEST_F(SqliteUplinkPath, ASaveAfterTheCheckEndsTheFastPathUntilTheSaveIsUndone) {
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  ASSERT_TRUE(store_->savepoint().ok());
  EdgeDeviceState state;
  std::uint64_t generation = 0;
  ASSERT_TRUE(store_->load(id_, state, generation).ok());
  state.established_count = 1;  // e.g. an INIT or a downlink changed the state
  ASSERT_TRUE(store_->save(id_, state, kNow, generation).ok());
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr) << "not checked since";
  ASSERT_TRUE(store_->rollback_to_savepoint().ok());
  EdgeSession* session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr) << "the checked state is back";
  store_->forget(id_);
  ASSERT_TRUE(store_->commit().ok());
}

TEST_F(SqliteUplinkPath, AWindowMovedThenAWholeSaveInOneSavepointAreBothUndone) {
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  EdgeSession* session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr);
  accept(*session, 50, kNow + 9);
  ASSERT_TRUE(store_->savepoint().ok());
  ASSERT_TRUE(store_->stage_accept(id_, *session, 50).ok());
  EdgeDeviceState state;
  std::uint64_t generation = 0;
  ASSERT_TRUE(store_->load(id_, state, generation).ok());
  ASSERT_EQ(state.established[1].sessctr, kSessctr);
  EXPECT_EQ(state.established[1].uplink_window.check(50), Error::replay) << "a load sees it";
  ASSERT_EQ(state.established[1].uplink_window.accept(51), Error::ok);
  ASSERT_TRUE(store_->save(id_, state, kNow, generation).ok());
  ASSERT_TRUE(store_->rollback_to_savepoint().ok());
  ASSERT_TRUE(store_->commit().ok());
  const EdgeSession stored = stored_session();
  EXPECT_EQ(stored.uplink_window.check(50), Error::ok);
  EXPECT_EQ(stored.uplink_window.check(51), Error::ok);
}

// A frame refused on the fast path (a replay) leaves its session handed out; a later save of
// that device replaces the state the session lives in, and the state is reused for another
// device's save. Handing the session back must never write into that other device's state.
TEST_F(SqliteUplinkPath, ASessionLeftHandedOutNeverWritesIntoAnotherDevicesState) {
  DevId other = dev_id_of("esp32-02");
  EdgeDeviceState b = make_rich_state("esp32-02");
  ASSERT_EQ(b.established[1].uplink_window.accept(500), Error::ok);
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store_->save(other, b, kNow, generation).ok());

  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  ASSERT_NE(store_->find_session(id_, kSessctr, kCred), nullptr);  // refused: not staged
  for (const DevId* id : {&id_, &other}) {                         // e.g. an INIT of each device
    ASSERT_TRUE(store_->savepoint().ok());
    EdgeDeviceState state;
    ASSERT_TRUE(store_->load(*id, state, generation).ok());
    ASSERT_TRUE(store_->save(*id, state, kNow, generation).ok());
    ASSERT_TRUE(store_->release_savepoint().ok());
  }
  ASSERT_TRUE(store_->commit().ok());
  EdgeDeviceState stored;
  ASSERT_TRUE(store_->load(other, stored, generation).ok());
  EXPECT_EQ(stored.established[1].uplink_window.check(500), Error::replay);
  EXPECT_EQ(stored.established[1].uplink_window.top(), b.established[1].uplink_window.top());
}

TEST_F(SqliteUplinkPath, NothingIsHandedOutAfterTheTransactionEnds) {
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  accept_on_fast_path(50);
  ASSERT_TRUE(store_->commit().ok());
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr);
  ASSERT_TRUE(store_->begin().ok());
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr) << "a new batch checks again";
  ASSERT_TRUE(store_->rollback().ok());
}

TEST_F(SqliteUplinkPath, ARolledBackTransactionLeavesTheStoredWindow) {
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  accept_on_fast_path(50);
  ASSERT_TRUE(store_->rollback().ok());
  EXPECT_EQ(stored_session().uplink_window.check(50), Error::ok);
}

class SqliteKeptStates : public SqliteUplinkPath {
 protected:
  void SetUp() override {
    SqliteUplinkPath::SetUp();
    reopen({.cached_devices = 8});
    ASSERT_TRUE(store_->begin().ok());
    save_and_check();
    accept_on_fast_path(50);
    ASSERT_TRUE(store_->commit().ok());
  }
};

TEST_F(SqliteKeptStates, TheNextTransactionHandsOutTheCommittedStateWithoutARead) {
  ASSERT_TRUE(store_->begin().ok());
  EdgeSession* session = store_->find_session(id_, kSessctr, kCred);
  ASSERT_NE(session, nullptr) << "kept, and still checked";
  EXPECT_EQ(session->uplink_window.check(50), Error::replay);
  store_->forget(id_);
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred + 1), nullptr) << "rotated credentials";
  accept_on_fast_path(51);
  ASSERT_TRUE(store_->commit().ok());
  reopen({});  // what the file holds
  EXPECT_EQ(stored_session().uplink_window.check(50), Error::replay);
  EXPECT_EQ(stored_session().uplink_window.check(51), Error::replay);
}

TEST_F(SqliteKeptStates, AnotherConnectionsCommitDropsThem) {
  {
    std::string error;
    auto other = SqliteSessionStore::open(dir_.file("edge.db"), {}, error);
    ASSERT_NE(other, nullptr) << error;
    ASSERT_TRUE(other->remove(id_).ok());  // e.g. dsekp keys reset-state
  }
  ASSERT_TRUE(store_->begin().ok());
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr);
  EdgeDeviceState state;
  std::uint64_t generation = 99;
  ASSERT_TRUE(store_->load(id_, state, generation).ok());
  EXPECT_EQ(generation, kAbsentGeneration) << "read from the file, not from memory";
  ASSERT_TRUE(store_->rollback().ok());
}

TEST_F(SqliteKeptStates, ATransactionThatDoesNotCommitDropsThem) {
  ASSERT_TRUE(store_->begin().ok());
  accept_on_fast_path(52);
  ASSERT_TRUE(store_->rollback().ok());
  ASSERT_TRUE(store_->begin().ok());
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr);
  EdgeDeviceState state;
  std::uint64_t generation = 0;
  ASSERT_TRUE(store_->load(id_, state, generation).ok());
  EXPECT_EQ(state.established[1].uplink_window.check(52), Error::ok);
  EXPECT_EQ(state.established[1].uplink_window.check(50), Error::replay);
  ASSERT_TRUE(store_->rollback().ok());
}

TEST_F(SqliteKeptStates, AWriteOutsideATransactionDropsThem) {
  EdgeDeviceState state = make_rich_state();
  state.established_count = 1;  // sessctr 2 gone
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store_->save(id_, state, kNow, generation).ok());
  ASSERT_TRUE(store_->begin().ok());
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr);
  ASSERT_TRUE(store_->rollback().ok());
}

TEST_F(SqliteKeptStates, PastTheBoundNothingIsKept) {
  reopen({.cached_devices = 1});
  ASSERT_TRUE(store_->begin().ok());
  save_and_check();
  EdgeDeviceState other = make_rich_state("esp32-02");
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store_->save(dev_id_of("esp32-02"), other, kNow, generation).ok());
  ASSERT_TRUE(store_->commit().ok());
  ASSERT_TRUE(store_->begin().ok());
  EXPECT_EQ(store_->find_session(id_, kSessctr, kCred), nullptr) << "two devices, room for one";
  ASSERT_TRUE(store_->rollback().ok());
}

}  // namespace
}  // namespace dsekp::edge::testing
