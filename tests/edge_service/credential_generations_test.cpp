// SqliteCredentialGenerations on a real store file: records are written only inside the store's
// transaction, commit and roll back with it, and survive reopening.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "edge/service/sqlite_credential_generations.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

class CredentialGenerationsTest : public ::testing::Test {
 protected:
  CredentialGenerationsTest() { open(); }
  void open() {
    generations_.reset();
    store_.reset();
    std::string error;
    store_ = SqliteSessionStore::open(dir_.file("state.db"), {}, error);
    ASSERT_NE(store_, nullptr) << error;
    generations_ = SqliteCredentialGenerations::open(*store_, error);
    ASSERT_NE(generations_, nullptr) << error;
    ASSERT_EQ(dev_id_.assign("esp32-01"), Error::ok);
  }
  std::optional<std::uint64_t> loaded() {
    std::optional<std::uint64_t> g;
    EXPECT_TRUE(generations_->load(dev_id_, g).ok());
    return g;
  }

  dsekp::test::TempDir dir_;
  std::unique_ptr<SqliteSessionStore> store_;
  std::unique_ptr<SqliteCredentialGenerations> generations_;
  DevId dev_id_;
};

TEST_F(CredentialGenerationsTest, AbsentUntilRecorded) {
  EXPECT_FALSE(loaded().has_value());
}

TEST_F(CredentialGenerationsTest, WritesOnlyInsideATransaction) {
  EXPECT_EQ(generations_->record(dev_id_, 3).status, StoreStatus::transaction_misuse);
  EXPECT_EQ(generations_->remove(dev_id_).status, StoreStatus::transaction_misuse);
  EXPECT_FALSE(loaded().has_value());
}

TEST_F(CredentialGenerationsTest, CommitsAndRollsBackWithTheStore) {
  {
    Transaction tx(*store_);
    ASSERT_TRUE(tx.status().ok());
    ASSERT_TRUE(generations_->record(dev_id_, 7).ok());
    ASSERT_TRUE(tx.rollback().ok());
  }
  EXPECT_FALSE(loaded().has_value());
  {
    Transaction tx(*store_);
    ASSERT_TRUE(generations_->record(dev_id_, 7).ok());
    ASSERT_TRUE(generations_->record(dev_id_, 9).ok());  // the newest wins
    ASSERT_TRUE(tx.commit().ok());
  }
  EXPECT_EQ(loaded(), 9u);
  open();  // survives reopening
  EXPECT_EQ(loaded(), 9u);
  {
    Transaction tx(*store_);
    ASSERT_TRUE(generations_->remove(dev_id_).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  EXPECT_FALSE(loaded().has_value());
}

// Inside a transaction a record is read from SQLite once; what the cache answers must still be
// what the database holds: after this object's own writes, after a savepoint undid one, and in
// the next transaction after another connection changed it.
TEST_F(CredentialGenerationsTest, ReadsInsideATransactionFollowEveryChange) {
  {
    Transaction tx(*store_);
    ASSERT_TRUE(generations_->record(dev_id_, 4).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  {
    Transaction tx(*store_);
    EXPECT_EQ(loaded(), 4u);
    ASSERT_TRUE(store_->savepoint().ok());
    ASSERT_TRUE(generations_->record(dev_id_, 5).ok());
    EXPECT_EQ(loaded(), 5u);
    ASSERT_TRUE(store_->rollback_to_savepoint().ok());
    EXPECT_EQ(loaded(), 4u) << "the undone record is not answered from memory";
    ASSERT_TRUE(store_->savepoint().ok());
    ASSERT_TRUE(generations_->remove(dev_id_).ok());
    EXPECT_FALSE(loaded().has_value());
    ASSERT_TRUE(store_->rollback_to_savepoint().ok());
    EXPECT_EQ(loaded(), 4u);
    ASSERT_TRUE(tx.commit().ok());
  }
  // Another process (a second connection) changes the record between two transactions.
  {
    Transaction tx(*store_);
    EXPECT_EQ(loaded(), 4u);
    ASSERT_TRUE(tx.commit().ok());
  }
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.file("state.db").c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "UPDATE credential_generation SET generation = 8", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(other);
  Transaction tx(*store_);
  EXPECT_EQ(loaded(), 8u) << "a new transaction reads the database again";
  ASSERT_TRUE(tx.commit().ok());
}

}  // namespace
}  // namespace dsekp::edge::testing
