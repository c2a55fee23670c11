// CredentialGenerations on SQLite: one row per device in the session store's own database, on
// its connection, so that a record commits or rolls back with the state it describes.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

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
  explicit SqliteCredentialGenerations(sqlite3* db) noexcept : db_(db) {}
  StoreResult failure();
  [[nodiscard]] bool in_transaction() const noexcept;

  sqlite3* db_;  // owned by the session store
  sqlite::SqliteStatement load_;
  sqlite::SqliteStatement record_;
  sqlite::SqliteStatement remove_;
  std::string last_error_;
};

}  // namespace dsekp::edge
