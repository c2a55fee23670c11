// CredentialGenerations on SQLite: one row per device in the session store's own database, on
// its connection, so that a record commits or rolls back with the state it describes.
//
// Inside a transaction a device's record is read once: the answer is kept until the transaction
// ends, a savepoint is undone (SqliteSessionStore::read_epoch) or this object writes the
// device's record, so a batch of one device's messages asks SQLite once.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "credential_generations.hpp"
#include "edge/store/sqlite_session_store.hpp"

namespace dsekp::edge {

/// Table credential_generation(dev_id TEXT PRIMARY KEY, generation INTEGER) in the database of a
/// SqliteSessionStore, on its connection. Not thread-safe (like the store it shares).
class SqliteCredentialGenerations final : public CredentialGenerations {
 public:
  /// Creates the table if missing. `store` must outlive the result. Null and `error` on failure.
  static std::unique_ptr<SqliteCredentialGenerations> open(SqliteSessionStore& store,
                                                           std::string& error);

  StoreResult load(const DevId& dev_id, std::optional<std::uint64_t>& generation) override;
  StoreResult record(const DevId& dev_id, std::uint64_t generation) override;
  StoreResult remove(const DevId& dev_id) override;

  /// SQLite's message for the last storage_failure.
  [[nodiscard]] const std::string& last_error() const noexcept { return last_error_; }

 private:
  explicit SqliteCredentialGenerations(SqliteSessionStore& store) noexcept
      : store_(store), db_(store.connection()) {}
  StoreResult failure();
  [[nodiscard]] bool in_transaction() const noexcept;

  SqliteSessionStore& store_;  // whose savepoint must cover the writes
  sqlite3* db_;                // owned by the session store
  sqlite::SqliteStatement load_;
  sqlite::SqliteStatement record_;
  sqlite::SqliteStatement remove_;
  std::string last_error_;
  std::uint64_t read_epoch_ = 0;  // SqliteSessionStore::read_epoch() of the answers in read_
  std::unordered_map<std::string, std::optional<std::uint64_t>> read_;
};

}  // namespace dsekp::edge
