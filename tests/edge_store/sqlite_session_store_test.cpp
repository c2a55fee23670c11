// SqliteSessionStore on real database files: round trips, deletion, corrupted rows, atomic
// transactions (with rows of other tables), generations, file mode, and a SIGKILL.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "edge/store/sqlite_session_store.hpp"
#include "store_test_support.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr std::uint64_t kNow = 1'764'460'800'000;

class SqliteStore : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteSessionStore> open(const SqliteStoreOptions& options = {}) {
    std::string error;
    auto store = SqliteSessionStore::open(path_, options, error);
    EXPECT_NE(store, nullptr) << error;
    return store;
  }
  // Runs SQL on the store's connection, as a sink (or an attacker with the file) would.
  static void exec(SqliteSessionStore& store, const std::string& sql) {
    char* message = nullptr;
    ASSERT_EQ(sqlite3_exec(store.connection(), sql.c_str(), nullptr, nullptr, &message), SQLITE_OK)
        << (message ? message : "");
  }
  static std::int64_t count(SqliteSessionStore& store, const std::string& table) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(store.connection(), ("SELECT count(*) FROM " + table).c_str(), -1,
                                 &s, nullptr),
              SQLITE_OK);
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW);
    const std::int64_t n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
  }

  TempDir dir_;
  std::string path_ = dir_.file("edge.db");
  DevId id_ = dev_id_of("esp32-01");
};

TEST_F(SqliteStore, AbsentDeviceLoadsAsFreshState) {
  auto store = open();
  EdgeDeviceState out = make_rich_state();
  std::uint64_t generation = 99;
  ASSERT_TRUE(store->load(id_, out, generation).ok());
  EXPECT_EQ(generation, kAbsentGeneration);
  expect_same_state(out, EdgeDeviceState{});
}

TEST_F(SqliteStore, SavedStateLoadsBackWithEveryField) {
  auto store = open();
  const EdgeDeviceState state = make_rich_state();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, state, kNow, generation).ok());
  EXPECT_EQ(generation, 1u);
  EdgeDeviceState out;
  std::uint64_t loaded = 0;
  ASSERT_TRUE(store->load(id_, out, loaded).ok());
  EXPECT_EQ(loaded, 1u);
  expect_same_state(state, out);
  generation = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, state, kNow + 1, generation).ok());
  EXPECT_EQ(generation, 2u);
}

TEST_F(SqliteStore, StateSurvivesClosingAndReopening) {
  const EdgeDeviceState state = make_rich_state();
  {
    auto store = open();
    std::uint64_t generation = kAnyGeneration;
    ASSERT_TRUE(store->save(id_, state, kNow, generation).ok());
  }
  auto store = open();
  EdgeDeviceState out;
  std::uint64_t generation = 0;
  ASSERT_TRUE(store->load(id_, out, generation).ok());
  EXPECT_EQ(generation, 1u);
  expect_same_state(state, out);
}

// make_durable() syncs what was committed (the erasure of a ratcheting device's provisioned
// secret waits for it, PROTOCOL.md 6.6) without waiting for a reader of the file, which a
// checkpoint would: a reader holding an old snapshot does not make it fail or stall.
TEST_F(SqliteStore, MakeDurableSyncsTheCommitsWhileAReaderHoldsASnapshot) {
  auto store = open();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, generation).ok());
  sqlite3* reader = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &reader), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM device_state;", nullptr, nullptr, nullptr),
      SQLITE_OK);
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow + 1, generation).ok());
  EXPECT_TRUE(store->make_durable().ok());
  {
    Transaction tx(*store);
    EXPECT_EQ(store->make_durable().status, StoreStatus::transaction_misuse);
  }
  sqlite3_close(reader);
}

TEST_F(SqliteStore, RemoveDeletesTheDevice) {
  auto store = open();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, generation).ok());
  ASSERT_TRUE(store->remove(id_).ok());
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(id_, out, generation).ok());
  EXPECT_EQ(generation, kAbsentGeneration);
  EXPECT_TRUE(store->remove(id_).ok());  // absent: still ok
  EXPECT_EQ(count(*store, "device_state"), 0);
}

TEST_F(SqliteStore, CorruptedRowsAreNamedErrors) {
  auto store = open();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, generation).ok());
  const struct {
    const char* blob;
    StateCodecError expected;
  } cases[] = {
      {"x''", StateCodecError::truncated},
      {"x'0102'", StateCodecError::truncated},
      {"x'07'", StateCodecError::unsupported_version},
      {"x'0102212f'", StateCodecError::bad_dev_id},
  };
  for (const auto& c : cases) {
    exec(*store, std::string("UPDATE device_state SET state = ") + c.blob);
    EdgeDeviceState out = make_rich_state();
    std::uint64_t loaded = 0;
    const StoreResult r = store->load(id_, out, loaded);
    EXPECT_EQ(r.status, StoreStatus::corrupt_state) << c.blob;
    EXPECT_EQ(r.codec, c.expected) << c.blob;
    EXPECT_EQ(loaded, 1u);  // so that the edge can replace the row deliberately
    expect_same_state(out, EdgeDeviceState{});
  }
}

TEST_F(SqliteStore, RowOfAnotherDeviceIsCorrupt) {
  auto store = open();
  const DevId other = dev_id_of("esp32-02");
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(other, make_rich_state("esp32-02"), kNow, generation).ok());
  // Someone with write access to the file swaps the rows of two devices.
  exec(*store, "UPDATE device_state SET dev_id = 'esp32-01'");
  EdgeDeviceState out;
  const StoreResult r = store->load(id_, out, generation);
  EXPECT_EQ(r.status, StoreStatus::corrupt_state);
  EXPECT_EQ(r.codec, StateCodecError::dev_id_mismatch);
}

TEST_F(SqliteStore, SaveRefusesAStateOfAnotherDevice) {
  auto store = open();
  std::uint64_t generation = kAnyGeneration;
  EXPECT_EQ(store->save(id_, make_rich_state("esp32-02"), kNow, generation).status,
            StoreStatus::dev_id_mismatch);
  EdgeDeviceState broken = make_rich_state();
  broken.established_count = 12;
  const StoreResult r = store->save(id_, broken, kNow, generation);
  EXPECT_EQ(r.status, StoreStatus::invalid_state);
  EXPECT_EQ(r.codec, StateCodecError::too_many_sessions);
}

TEST_F(SqliteStore, RollbackLeavesTheOldState) {
  auto store = open();
  EdgeDeviceState old_state = make_rich_state();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, old_state, kNow, generation).ok());
  exec(*store, "CREATE TABLE sink(reading TEXT)");
  {
    Transaction tx(*store);
    ASSERT_TRUE(tx.status().ok());
    EdgeDeviceState newer = make_rich_state();
    ASSERT_EQ(newer.established[1].uplink_window.accept(64), Error::ok);
    ASSERT_TRUE(store->save(id_, newer, kNow + 1, generation).ok());
    exec(*store, "INSERT INTO sink VALUES('{\"t\":24.0}')");
    // No commit: the guard rolls back, as when the edge fails before it publishes.
  }
  EXPECT_FALSE(store->in_transaction());
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(id_, out, generation).ok());
  EXPECT_EQ(generation, 1u);
  expect_same_state(old_state, out);
  EXPECT_EQ(count(*store, "sink"), 0);
}

TEST_F(SqliteStore, CommitStoresStateAndSinkRowsTogether) {
  auto store = open();
  exec(*store, "CREATE TABLE sink(reading TEXT)");
  const EdgeDeviceState state = make_rich_state();
  const DevId other = dev_id_of("esp32-02");
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(other, make_rich_state("esp32-02"), kNow, generation).ok());
  Transaction tx(*store);
  ASSERT_TRUE(tx.status().ok());
  generation = kAbsentGeneration;
  ASSERT_TRUE(store->save(id_, state, kNow, generation).ok());
  ASSERT_TRUE(store->remove(other).ok());
  exec(*store, "INSERT INTO sink VALUES('{\"t\":24.0}')");
  ASSERT_TRUE(tx.commit().ok());
  EXPECT_EQ(count(*store, "sink"), 1);
  EXPECT_EQ(count(*store, "device_state"), 1);
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(id_, out, generation).ok());
  expect_same_state(state, out);
}

TEST_F(SqliteStore, TransactionsDoNotNest) {
  auto store = open();
  EXPECT_EQ(store->commit().status, StoreStatus::transaction_misuse);
  EXPECT_EQ(store->rollback().status, StoreStatus::transaction_misuse);
  Transaction tx(*store);
  ASSERT_TRUE(tx.status().ok());
  EXPECT_EQ(store->begin().status, StoreStatus::transaction_misuse);
  EXPECT_TRUE(tx.commit().ok());
  EXPECT_EQ(tx.commit().status, StoreStatus::transaction_misuse);
}

// A batch: one transaction, a savepoint per message. An undone message loses its state change and
// its sink row; the kept messages before and after it commit together.
TEST_F(SqliteStore, SavepointUndoesOneMessageOfABatch) {
  auto store = open();
  exec(*store, "CREATE TABLE sink(reading TEXT)");
  const DevId two = dev_id_of("esp32-02");
  const DevId three = dev_id_of("esp32-03");
  ASSERT_TRUE(store->begin().ok());
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->savepoint().ok());
  EXPECT_TRUE(store->in_savepoint());
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, generation).ok());
  ASSERT_TRUE(store->before_direct_write().ok());  // another writer on the connection
  exec(*store, "INSERT INTO sink VALUES('one')");
  ASSERT_TRUE(store->release_savepoint().ok());
  EXPECT_FALSE(store->in_savepoint());

  ASSERT_TRUE(store->savepoint().ok());
  generation = kAnyGeneration;
  ASSERT_TRUE(store->save(two, make_rich_state("esp32-02"), kNow, generation).ok());
  ASSERT_TRUE(store->remove(id_).ok());  // undone below: esp32-01 stays
  ASSERT_TRUE(store->before_direct_write().ok());
  exec(*store, "INSERT INTO sink VALUES('two')");
  ASSERT_TRUE(store->rollback_to_savepoint().ok());
  EXPECT_TRUE(store->in_transaction());

  ASSERT_TRUE(store->savepoint().ok());
  generation = kAnyGeneration;
  ASSERT_TRUE(store->save(three, make_rich_state("esp32-03"), kNow, generation).ok());
  ASSERT_TRUE(store->before_direct_write().ok());
  exec(*store, "INSERT INTO sink VALUES('three')");
  ASSERT_TRUE(store->release_savepoint().ok());
  ASSERT_TRUE(store->commit().ok());

  EXPECT_EQ(count(*store, "sink"), 2);
  EXPECT_EQ(count(*store, "device_state"), 2);
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(id_, out, generation).ok());
  expect_same_state(make_rich_state(), out);
  ASSERT_TRUE(store->load(two, out, generation).ok());
  EXPECT_EQ(generation, kAbsentGeneration);
  ASSERT_TRUE(store->load(three, out, generation).ok());
  EXPECT_EQ(generation, 1u);
}

// Inside a transaction states are held in memory until the commit: an undone savepoint must
// bring back the device's state as the kept messages before it left it (not the database's,
// and not the undone one), and the commit must store exactly that, under the generation the
// database had plus the kept saves.
TEST_F(SqliteStore, AnUndoneSavepointRestoresTheStateOfTheKeptMessagesBeforeIt) {
  auto store = open();
  std::uint64_t generation = kAbsentGeneration;
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, generation).ok());  // generation 1
  EdgeDeviceState second = make_rich_state();
  second.next_session_serial = 50;
  EdgeDeviceState third = make_rich_state();
  third.next_session_serial = 60;

  ASSERT_TRUE(store->begin().ok());
  ASSERT_TRUE(store->savepoint().ok());
  ASSERT_TRUE(store->save(id_, second, kNow, generation).ok());
  EXPECT_EQ(generation, 2u);
  ASSERT_TRUE(store->release_savepoint().ok());
  ASSERT_TRUE(store->savepoint().ok());
  ASSERT_TRUE(store->save(id_, third, kNow, generation).ok());
  EXPECT_EQ(generation, 3u);
  ASSERT_TRUE(store->rollback_to_savepoint().ok());
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(id_, out, generation).ok());
  EXPECT_EQ(generation, 2u);
  expect_same_state(second, out);
  // A save conditioned on the undone generation is a conflict, as it would be in the database.
  std::uint64_t undone = 3;
  EXPECT_EQ(store->save(id_, third, kNow, undone).status, StoreStatus::generation_conflict);
  ASSERT_TRUE(store->commit().ok());

  ASSERT_TRUE(store->load(id_, out, generation).ok());
  EXPECT_EQ(generation, 2u);
  expect_same_state(second, out);
}

TEST_F(SqliteStore, SavepointsNeedATransactionAndDoNotNest) {
  auto store = open();
  EXPECT_EQ(store->savepoint().status, StoreStatus::transaction_misuse);
  EXPECT_EQ(store->release_savepoint().status, StoreStatus::transaction_misuse);
  EXPECT_EQ(store->rollback_to_savepoint().status, StoreStatus::transaction_misuse);
  ASSERT_TRUE(store->begin().ok());
  ASSERT_TRUE(store->savepoint().ok());
  EXPECT_EQ(store->savepoint().status, StoreStatus::transaction_misuse);
  // A commit with an open savepoint commits its writes too and ends it.
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, generation).ok());
  ASSERT_TRUE(store->commit().ok());
  EXPECT_FALSE(store->in_savepoint());
  EdgeDeviceState out;
  ASSERT_TRUE(store->load(id_, out, generation).ok());
  EXPECT_EQ(generation, 1u);
}

// SQLite may end the whole transaction by itself (here: a sink's statement does it, as a
// disk-full error would). The store must then refuse to open a savepoint, which outside a
// transaction would start a new one that commits on its own, and the commit must fail.
TEST_F(SqliteStore, ALostTransactionFailsTheBatchInsteadOfAutocommitting) {
  auto store = open();
  ASSERT_TRUE(store->begin().ok());
  ASSERT_TRUE(store->savepoint().ok());
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, generation).ok());
  ASSERT_TRUE(store->release_savepoint().ok());
  exec(*store, "ROLLBACK");  // the transaction is gone behind the store's back
  EXPECT_EQ(store->savepoint().status, StoreStatus::storage_failure);
  generation = kAnyGeneration;
  EXPECT_EQ(
      store->save(dev_id_of("esp32-02"), make_rich_state("esp32-02"), kNow, generation).status,
      StoreStatus::storage_failure);
  EXPECT_EQ(store->commit().status, StoreStatus::storage_failure);
  EXPECT_FALSE(store->in_transaction());
  EXPECT_EQ(count(*store, "device_state"), 0);
}

TEST_F(SqliteStore, GenerationsCatchAConcurrentWriter) {
  auto store = open();
  std::uint64_t mine = kAbsentGeneration;
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, mine).ok());
  EXPECT_EQ(mine, 1u);
  std::uint64_t again = kAbsentGeneration;  // "must not exist yet"
  EXPECT_EQ(store->save(id_, make_rich_state(), kNow, again).status,
            StoreStatus::generation_conflict);
  std::uint64_t theirs = kAnyGeneration;  // another writer
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, theirs).ok());
  EXPECT_EQ(theirs, 2u);
  EXPECT_EQ(store->save(id_, make_rich_state(), kNow, mine).status,
            StoreStatus::generation_conflict);
  EXPECT_EQ(mine, 1u);
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, theirs).ok());
  EXPECT_EQ(theirs, 3u);
}

TEST_F(SqliteStore, FilesAreReadableByTheOwnerOnly) {
  auto store = open();
  std::uint64_t generation = kAnyGeneration;
  ASSERT_TRUE(store->save(id_, make_rich_state(), kNow, generation).ok());
  for (const std::string& file : {path_, path_ + "-wal", path_ + "-shm"}) {
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << file;
  }
}

TEST_F(SqliteStore, ExistingLooseFileIsTightened) {
  { std::ofstream(path_).flush(); }
  ASSERT_EQ(::chmod(path_.c_str(), 0644), 0);
  auto store = open();
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(SqliteStore, RunsInWalWithTheChosenSynchronousLevel) {
  const auto pragma = [](SqliteSessionStore& store, const char* sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(store.connection(), sql, -1, &s, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW);
    std::string value(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
    sqlite3_finalize(s);
    return value;
  };
  {
    auto store = open();
    EXPECT_EQ(pragma(*store, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(pragma(*store, "PRAGMA synchronous"), "1");  // NORMAL
  }
  SqliteStoreOptions full;
  full.synchronous = SqliteStoreOptions::Synchronous::full;
  auto store = open(full);
  EXPECT_EQ(pragma(*store, "PRAGMA synchronous"), "2");  // FULL
}

TEST_F(SqliteStore, UnopenablePathIsAnError) {
  std::string error;
  EXPECT_EQ(SqliteSessionStore::open(dir_.file("no/such/dir/edge.db"), {}, error), nullptr);
  EXPECT_FALSE(error.empty());
}

// The edge is killed right after a commit, without closing the database: the committed state
// is in the WAL only, and a new process must find it.
TEST_F(SqliteStore, CommittedStateSurvivesSigkill) {
  const EdgeDeviceState state = make_rich_state();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string error;
    auto store = SqliteSessionStore::open(path_, {}, error);
    std::uint64_t generation = kAnyGeneration;
    if (store == nullptr || !store->save(id_, state, kNow, generation).ok()) ::_exit(1);
    ::raise(SIGKILL);
    ::_exit(2);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  EXPECT_TRUE(std::filesystem::exists(path_ + "-wal"));  // never checkpointed
  auto store = open();
  EdgeDeviceState out;
  std::uint64_t generation = 0;
  ASSERT_TRUE(store->load(id_, out, generation).ok());
  EXPECT_EQ(generation, 1u);
  expect_same_state(state, out);
}

TEST(StoreStatusNames, AreStable) {
  EXPECT_STREQ(store_status_name(StoreStatus::corrupt_state), "corrupt_state");
  EXPECT_STREQ(store_status_name(StoreStatus::generation_conflict), "generation_conflict");
  EXPECT_STREQ(store_status_name(StoreStatus::storage_failure), "storage_failure");
}

}  // namespace
}  // namespace dsekp::edge::testing
