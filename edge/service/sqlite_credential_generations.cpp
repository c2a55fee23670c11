// CredentialGenerations on the session store's SQLite connection (see
// sqlite_credential_generations.hpp).
#include "sqlite_credential_generations.hpp"

namespace dsekp::edge {
namespace {

using sqlite::SqliteStatement;
using sqlite::StatementScope;

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS credential_generation("
    " dev_id TEXT PRIMARY KEY NOT NULL,"
    " generation INTEGER NOT NULL)"
    " WITHOUT ROWID";
constexpr const char* kLoad = "SELECT generation FROM credential_generation WHERE dev_id = ?1";
constexpr const char* kRecord =
    "INSERT INTO credential_generation(dev_id, generation) VALUES(?1, ?2)"
    " ON CONFLICT(dev_id) DO UPDATE SET generation = excluded.generation";
constexpr const char* kRemove = "DELETE FROM credential_generation WHERE dev_id = ?1";

void bind_dev_id(sqlite3_stmt* s, const DevId& dev_id) {
  sqlite3_bind_text(s, 1, dev_id.str().data(), static_cast<int>(dev_id.size()), SQLITE_STATIC);
}

}  // namespace

std::unique_ptr<SqliteCredentialGenerations> SqliteCredentialGenerations::open(
    SqliteSessionStore& store, std::string& error) {
  sqlite3* db = store.connection();
  char* message = nullptr;
  if (sqlite3_exec(db, kSchema, nullptr, nullptr, &message) != SQLITE_OK) {
    error = std::string("credential_generation: ") + (message ? message : sqlite3_errmsg(db));
    sqlite3_free(message);
    return nullptr;
  }
  std::unique_ptr<SqliteCredentialGenerations> out(new SqliteCredentialGenerations(store));
  out->load_ = SqliteStatement(db, kLoad);
  out->record_ = SqliteStatement(db, kRecord);
  out->remove_ = SqliteStatement(db, kRemove);
  if (!out->load_.ok() || !out->record_.ok() || !out->remove_.ok()) {
    error = std::string("credential_generation: prepare: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  return out;
}

StoreResult SqliteCredentialGenerations::failure() {
  last_error_ = sqlite3_errmsg(db_);
  return storage_failure(last_error_);
}

// Asked of SQLite rather than of the store's flag: after some errors SQLite has already ended
// the transaction by itself, and a write now would commit on its own, outside the unit.
bool SqliteCredentialGenerations::in_transaction() const noexcept {
  return sqlite3_get_autocommit(db_) == 0;
}

StoreResult SqliteCredentialGenerations::load(const DevId& dev_id,
                                              std::optional<std::uint64_t>& generation) {
  generation.reset();
  const std::uint64_t epoch = store_.read_epoch();
  if (epoch != read_epoch_) {
    read_.clear();
    read_epoch_ = epoch;
  }
  if (epoch != 0) {
    if (const auto it = read_.find(std::string(dev_id.str())); it != read_.end()) {
      generation = it->second;
      return StoreResult{};
    }
  }
  StatementScope scope(load_);
  bind_dev_id(scope.get(), dev_id);
  const int rc = sqlite3_step(scope.get());
  if (rc == SQLITE_ROW) {
    generation = static_cast<std::uint64_t>(sqlite3_column_int64(scope.get(), 0));
  } else if (rc != SQLITE_DONE) {
    return failure();
  }
  if (epoch != 0) read_.emplace(std::string(dev_id.str()), generation);
  return StoreResult{};
}

StoreResult SqliteCredentialGenerations::record(const DevId& dev_id, std::uint64_t generation) {
  if (!in_transaction()) return StoreResult{StoreStatus::transaction_misuse};
  if (const StoreResult r = store_.before_direct_write(); !r.ok()) return r;
  read_.erase(std::string(dev_id.str()));
  StatementScope scope(record_);
  bind_dev_id(scope.get(), dev_id);
  sqlite3_bind_int64(scope.get(), 2, static_cast<sqlite3_int64>(generation));
  return sqlite3_step(scope.get()) == SQLITE_DONE ? StoreResult{} : failure();
}

StoreResult SqliteCredentialGenerations::remove(const DevId& dev_id) {
  if (!in_transaction()) return StoreResult{StoreStatus::transaction_misuse};
  if (const StoreResult r = store_.before_direct_write(); !r.ok()) return r;
  read_.erase(std::string(dev_id.str()));
  StatementScope scope(remove_);
  bind_dev_id(scope.get(), dev_id);
  return sqlite3_step(scope.get()) == SQLITE_DONE ? StoreResult{} : failure();
}

}  // namespace dsekp::edge
