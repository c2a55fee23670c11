// SessionStore on SQLite (see sqlite_session_store.hpp).
#include "sqlite_session_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "device_state_copy.hpp"

namespace dsekp::edge {
namespace {

using sqlite::SqliteStatement;
using sqlite::StatementScope;

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS device_state("
    " dev_id TEXT PRIMARY KEY NOT NULL,"
    " state BLOB NOT NULL,"
    " generation INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL)"
    // The rows are small and always found by dev_id: keeping them in the primary-key B-tree
    // avoids storing every dev_id twice (rowid table + its key index).
    " WITHOUT ROWID";

constexpr const char* kLoad = "SELECT state, generation FROM device_state WHERE dev_id = ?1";
constexpr const char* kUpsert =
    "INSERT INTO device_state(dev_id, state, generation, updated_ms) VALUES(?1, ?2, 1, ?3)"
    " ON CONFLICT(dev_id) DO UPDATE SET state = excluded.state,"
    " generation = device_state.generation + 1, updated_ms = excluded.updated_ms"
    " RETURNING generation";
constexpr const char* kInsertNew =
    "INSERT INTO device_state(dev_id, state, generation, updated_ms) VALUES(?1, ?2, 1, ?3)"
    " ON CONFLICT(dev_id) DO NOTHING RETURNING generation";
constexpr const char* kUpdateIf =
    "UPDATE device_state SET state = ?2, generation = generation + 1, updated_ms = ?3"
    " WHERE dev_id = ?1 AND generation = ?4 RETURNING generation";
constexpr const char* kRemove = "DELETE FROM device_state WHERE dev_id = ?1";
// The write-back's statements (state_write_back.hpp): the generation a transaction's first
// change of a device finds, and the flush at commit, conditional on that generation.
constexpr const char* kGeneration = "SELECT generation FROM device_state WHERE dev_id = ?1";
constexpr const char* kFlushInsert =
    "INSERT INTO device_state(dev_id, state, generation, updated_ms) VALUES(?1, ?2, ?4, ?3)"
    " ON CONFLICT(dev_id) DO NOTHING";
constexpr const char* kFlushUpdate =
    "UPDATE device_state SET state = ?2, generation = ?4, updated_ms = ?3"
    " WHERE dev_id = ?1 AND generation = ?5";
constexpr const char* kFlushRemove =
    "DELETE FROM device_state WHERE dev_id = ?1 AND generation = ?2";

// Creates the file with mode 0600 before SQLite opens it (SQLite would create it 0644 minus
// the umask), and tightens an existing file that others could read: it holds session keys.
bool create_private_file(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    error = "open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0;
  if (ok && (st.st_mode & 077) != 0) ok = ::fchmod(fd, 0600) == 0;
  if (!ok) error = "chmod 0600 " + path + ": " + std::strerror(errno);
  ::close(fd);
  return ok;
}

bool exec(sqlite3* db, const char* sql, std::string& error) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return true;
  error = std::string(sql) + ": " + (message != nullptr ? message : sqlite3_errmsg(db));
  sqlite3_free(message);
  return false;
}

// journal_mode answers with the mode actually in effect, which is not WAL on every file system.
bool enable_wal(sqlite3* db, std::string& error) {
  SqliteStatement pragma(db, "PRAGMA journal_mode=WAL");
  if (!pragma.ok() || sqlite3_step(pragma.get()) != SQLITE_ROW) {
    error = std::string("journal_mode=WAL: ") + sqlite3_errmsg(db);
    return false;
  }
  const auto* mode = reinterpret_cast<const char*>(sqlite3_column_text(pragma.get(), 0));
  if (mode == nullptr || std::strcmp(mode, "wal") != 0) {
    error = std::string("journal_mode=WAL refused, mode is ") + (mode ? mode : "?");
    return false;
  }
  return true;
}

bool configure(sqlite3* db, const SqliteStoreOptions& options, std::string& error) {
  if (sqlite3_busy_timeout(db, options.busy_timeout_ms) != SQLITE_OK) {
    error = sqlite3_errmsg(db);
    return false;
  }
  // What NORMAL and FULL guarantee in WAL mode is explained in sqlite_session_store.hpp.
  const char* sync = options.synchronous == SqliteStoreOptions::Synchronous::full
                         ? "PRAGMA synchronous=FULL"
                         : "PRAGMA synchronous=NORMAL";
  // secure_delete: pages freed by a delete or an update are zeroed, so the keys of a deleted
  // device (key rotation) do not linger in free pages of the file.
  // temp_store=MEMORY: a savepoint's sub-journal (the pages a message changes that the batch
  // changed before it, kept for ROLLBACK TO) stays in memory instead of a temporary file, which
  // would cost write calls for every message of a batch and would leave key material on disk.
  return enable_wal(db, error) && exec(db, sync, error) &&
         exec(db, "PRAGMA secure_delete=ON", error) &&
         exec(db, "PRAGMA temp_store=MEMORY", error) && exec(db, kSchema, error);
}

}  // namespace

std::unique_ptr<SqliteSessionStore> SqliteSessionStore::open(const std::string& path,
                                                             const SqliteStoreOptions& options,
                                                             std::string& error) {
  if (!create_private_file(path, error)) return nullptr;
  sqlite3* raw = nullptr;
  // NOMUTEX: a store is used by one thread at a time (session_store.hpp), so SQLite's own
  // per-connection mutex would only cost time.
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite3, sqlite::SqliteCloser> db(raw);
  if (rc != SQLITE_OK) {
    error = "sqlite3_open " + path + ": " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
    return nullptr;
  }
  if (!configure(db.get(), options, error)) return nullptr;
  std::unique_ptr<SqliteSessionStore> store(new SqliteSessionStore(std::move(db), options));
  if (!store->prepare_statements()) {
    error = "prepare: " + std::string(sqlite3_errmsg(store->connection()));
    return nullptr;
  }
  return store;
}

SqliteSessionStore::SqliteSessionStore(std::unique_ptr<sqlite3, sqlite::SqliteCloser> db,
                                       const SqliteStoreOptions& options) noexcept
    : db_(std::move(db)), options_(options) {}

SqliteSessionStore::~SqliteSessionStore() {
  if (in_transaction_) (void)rollback();
  secure_wipe(blob_);
}

bool SqliteSessionStore::prepare_statements() {
  sqlite3* db = db_.get();
  load_ = SqliteStatement(db, kLoad);
  upsert_ = SqliteStatement(db, kUpsert);
  insert_new_ = SqliteStatement(db, kInsertNew);
  update_if_ = SqliteStatement(db, kUpdateIf);
  remove_ = SqliteStatement(db, kRemove);
  generation_ = SqliteStatement(db, kGeneration);
  flush_insert_ = SqliteStatement(db, kFlushInsert);
  flush_update_ = SqliteStatement(db, kFlushUpdate);
  flush_remove_ = SqliteStatement(db, kFlushRemove);
  // IMMEDIATE takes the write lock at BEGIN, so a transaction cannot fail half-way with BUSY
  // when its first write would have to upgrade a read lock.
  begin_ = SqliteStatement(db, "BEGIN IMMEDIATE");
  commit_ = SqliteStatement(db, "COMMIT");
  rollback_ = SqliteStatement(db, "ROLLBACK");
  savepoint_ = SqliteStatement(db, "SAVEPOINT dsekp_message");
  release_ = SqliteStatement(db, "RELEASE dsekp_message");
  rollback_to_ = SqliteStatement(db, "ROLLBACK TO dsekp_message");
  data_version_ = SqliteStatement(db, "PRAGMA data_version");
  for (const SqliteStatement* s :
       {&load_, &upsert_, &insert_new_, &update_if_, &remove_, &generation_, &flush_insert_,
        &flush_update_, &flush_remove_, &begin_, &commit_, &rollback_, &savepoint_, &release_,
        &rollback_to_, &data_version_}) {
    if (!s->ok()) return false;
  }
  return true;
}

StoreResult SqliteSessionStore::failure(StoreStatus status) {
  last_error_ = sqlite3_errmsg(db_.get());
  // Some errors (disk full, I/O) make SQLite roll back the whole transaction by itself. The
  // unit is then lost: later writes must not run outside it, and commit() must fail.
  if (in_transaction_ && sqlite3_get_autocommit(db_.get()) != 0) aborted_ = true;
  return StoreResult{status, StateCodecError::ok, last_error_};
}

bool SqliteSessionStore::transaction_lost() noexcept {
  if (in_transaction_ && !aborted_ && sqlite3_get_autocommit(db_.get()) != 0) aborted_ = true;
  return aborted_;
}

StoreResult SqliteSessionStore::run(const SqliteStatement& statement) {
  StatementScope scope(statement);
  return sqlite3_step(scope.get()) == SQLITE_DONE ? StoreResult{} : failure();
}

StoreResult SqliteSessionStore::load(const DevId& dev_id, EdgeDeviceState& out,
                                     std::uint64_t& generation) {
  if (in_transaction_) {
    if (const StateWriteBack::Entry* e = write_back_.find(dev_id.str())) {
      if (e->removed()) {
        clear_device_state(out);
        generation = kAbsentGeneration;
      } else {
        copy_device_state(*e->state, out);
        generation = e->generation;
      }
      return StoreResult{};
    }
  }
  clear_device_state(out);
  generation = kAbsentGeneration;
  StatementScope scope(load_);
  sqlite3_stmt* s = scope.get();
  sqlite3_bind_text(s, 1, dev_id.str().data(), static_cast<int>(dev_id.size()), SQLITE_STATIC);
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_DONE) return StoreResult{};
  if (rc != SQLITE_ROW) return failure();
  // Decoded straight from SQLite's row buffer, valid until the scope resets the statement.
  const auto* blob = static_cast<const std::uint8_t*>(sqlite3_column_blob(s, 0));
  const auto size = static_cast<std::size_t>(sqlite3_column_bytes(s, 0));
  generation = static_cast<std::uint64_t>(sqlite3_column_int64(s, 1));
  const StateCodecError e = decode_device_state(ByteView(blob, size), &dev_id, out);
  if (e != StateCodecError::ok) return StoreResult{StoreStatus::corrupt_state, e};
  return StoreResult{};
}

StoreResult SqliteSessionStore::save(const DevId& dev_id, const EdgeDeviceState& state,
                                     std::uint64_t now_ms, std::uint64_t& generation) {
  // A session still handed out (a frame refused on the fast path) lives in a state this save
  // may replace and reuse for another device: it is handed back first.
  put_back_handed_out();
  if (transaction_lost()) return StoreResult{StoreStatus::storage_failure};
  if (state.dev_id.size() != 0 && !(state.dev_id == dev_id))
    return StoreResult{StoreStatus::dev_id_mismatch};
  if (in_transaction_) return save_in_transaction(dev_id, state, now_ms, generation);
  write_back_.clear();  // a kept state must be what the database holds
  if (const StateCodecError e = encode_device_state(state, blob_); e != StateCodecError::ok)
    return StoreResult{StoreStatus::invalid_state, e};
  const SqliteStatement& statement = generation == kAnyGeneration      ? upsert_
                                     : generation == kAbsentGeneration ? insert_new_
                                                                       : update_if_;
  const StoreResult result = write_state(statement, dev_id, now_ms, generation);
  secure_wipe(blob_);
  return result;
}

// The generation the database holds for the device (0: no row) and the one the open
// transaction has reached.
StoreResult SqliteSessionStore::current_generations(const DevId& dev_id, std::uint64_t& stored,
                                                    std::uint64_t& current) {
  if (const StateWriteBack::Entry* e = write_back_.find(dev_id.str())) {
    stored = e->stored_generation;
    current = e->removed() ? kAbsentGeneration : e->generation;
    return StoreResult{};
  }
  StatementScope scope(generation_);
  sqlite3_bind_text(scope.get(), 1, dev_id.str().data(), static_cast<int>(dev_id.size()),
                    SQLITE_STATIC);
  const int rc = sqlite3_step(scope.get());
  if (rc == SQLITE_ROW) {
    stored = static_cast<std::uint64_t>(sqlite3_column_int64(scope.get(), 0));
  } else if (rc == SQLITE_DONE) {
    stored = kAbsentGeneration;
  } else {
    return failure();
  }
  current = stored;
  return StoreResult{};
}

// `state` becomes the device's entry in the write-back, under the same rules the statements of
// save() apply (it is encoded at the commit).
StoreResult SqliteSessionStore::save_in_transaction(const DevId& dev_id,
                                                    const EdgeDeviceState& state,
                                                    std::uint64_t now_ms,
                                                    std::uint64_t& generation) {
  if (const StateCodecError e = check_device_state(state); e != StateCodecError::ok)
    return StoreResult{StoreStatus::invalid_state, e};
  std::uint64_t stored = 0, current = 0;
  if (const StoreResult r = current_generations(dev_id, stored, current); !r.ok()) return r;
  if (generation != kAnyGeneration && generation != current)
    return StoreResult{StoreStatus::generation_conflict};
  generation = current == kAbsentGeneration ? 1 : current + 1;
  write_back_.save(dev_id.str(), state, stored, generation, now_ms);
  return StoreResult{};
}

StoreResult SqliteSessionStore::flush_write_back() {
  StoreResult result;
  write_back_.for_each_dirty([&](const std::string& dev_id, const StateWriteBack::Entry& e) {
    if (!result.ok()) return;
    if (e.removed() && e.stored_generation == kAbsentGeneration) return;  // nothing stored
    const SqliteStatement& statement = e.removed()                                ? flush_remove_
                                       : e.stored_generation == kAbsentGeneration ? flush_insert_
                                                                                  : flush_update_;
    StatementScope scope(statement);
    sqlite3_stmt* st = scope.get();
    sqlite3_bind_text(st, 1, dev_id.data(), static_cast<int>(dev_id.size()), SQLITE_STATIC);
    if (e.removed()) {
      sqlite3_bind_int64(st, 2, static_cast<sqlite3_int64>(e.stored_generation));
    } else {
      // Checked at the save, so the encoding cannot fail.
      if (const StateCodecError c = encode_device_state(*e.state, blob_);
          c != StateCodecError::ok) {
        result = StoreResult{StoreStatus::invalid_state, c};
        return;
      }
      sqlite3_bind_blob(st, 2, blob_.data(), static_cast<int>(blob_.size()), SQLITE_STATIC);
      sqlite3_bind_int64(st, 3, static_cast<sqlite3_int64>(e.updated_ms));
      sqlite3_bind_int64(st, 4, static_cast<sqlite3_int64>(e.generation));
      if (&statement == &flush_update_)
        sqlite3_bind_int64(st, 5, static_cast<sqlite3_int64>(e.stored_generation));
    }
    const int rc = sqlite3_step(st);
    secure_wipe(blob_);
    if (rc != SQLITE_DONE) {
      result = failure();
    } else if (sqlite3_changes(db_.get()) != 1) {
      // BEGIN IMMEDIATE holds the write lock since the generation was read, so no other
      // writer can be in between; kept as a check all the same.
      result = StoreResult{StoreStatus::generation_conflict};
    }
  });
  return result;
}

StoreResult SqliteSessionStore::write_state(const SqliteStatement& statement, const DevId& dev_id,
                                            std::uint64_t now_ms, std::uint64_t& generation) {
  StatementScope scope(statement);
  sqlite3_stmt* s = scope.get();
  sqlite3_bind_text(s, 1, dev_id.str().data(), static_cast<int>(dev_id.size()), SQLITE_STATIC);
  // STATIC: SQLite reads the blob from our buffer instead of keeping its own copy of the keys.
  sqlite3_bind_blob(s, 2, blob_.data(), static_cast<int>(blob_.size()), SQLITE_STATIC);
  sqlite3_bind_int64(s, 3, static_cast<sqlite3_int64>(now_ms));
  if (&statement == &update_if_) sqlite3_bind_int64(s, 4, static_cast<sqlite3_int64>(generation));
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_DONE) return StoreResult{StoreStatus::generation_conflict};  // no row written
  if (rc != SQLITE_ROW) return failure();
  const auto written = static_cast<std::uint64_t>(sqlite3_column_int64(s, 0));
  // RETURNING hands out the row before the statement has finished; step it to completion.
  if (sqlite3_step(s) != SQLITE_DONE) return failure();
  generation = written;
  return StoreResult{};
}

StoreResult SqliteSessionStore::remove(const DevId& dev_id) {
  put_back_handed_out();  // as in save()
  if (transaction_lost()) return StoreResult{StoreStatus::storage_failure};
  if (in_transaction_) {
    std::uint64_t stored = 0, current = 0;
    if (const StoreResult r = current_generations(dev_id, stored, current); !r.ok()) return r;
    write_back_.remove(dev_id.str(), stored);
    return StoreResult{};
  }
  write_back_.clear();  // a kept state must be what the database holds
  StatementScope scope(remove_);
  sqlite3_bind_text(scope.get(), 1, dev_id.str().data(), static_cast<int>(dev_id.size()),
                    SQLITE_STATIC);
  return sqlite3_step(scope.get()) == SQLITE_DONE ? StoreResult{} : failure();
}

StoreResult SqliteSessionStore::begin() {
  if (in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  StoreResult r = run(begin_);
  in_transaction_ = r.ok();
  if (!in_transaction_) return r;
  ++epoch_;
  if (StoreResult seen = forget_if_changed_elsewhere(); !seen.ok()) {
    (void)rollback();  // the reading failed (an I/O error): no transaction, and the reason
    return seen;
  }
  return r;
}

StoreResult SqliteSessionStore::forget_if_changed_elsewhere() {
  if (options_.cached_devices == 0) return StoreResult{};  // nothing is kept between them
  // Inside the transaction: BEGIN IMMEDIATE holds the write lock, so nothing can change after
  // this reading until the commit.
  std::int64_t now = 0;
  {
    StatementScope scope(data_version_);
    const int rc = sqlite3_step(scope.get());
    if (rc == SQLITE_ROW) now = sqlite3_column_int64(scope.get(), 0);
    if (rc != SQLITE_ROW || transaction_lost()) {
      // An I/O error, or SQLite ending the transaction as it recovers from an earlier one.
      write_back_.clear();
      seen_data_version_.reset();
      return rc != SQLITE_ROW ? failure()
                              : storage_failure(
                                    "the transaction ended as it began (after an "
                                    "earlier I/O error?)");
    }
  }
  if (now != seen_data_version_) write_back_.clear();
  seen_data_version_ = now;
  return StoreResult{};
}

StoreResult SqliteSessionStore::make_durable() {
  if (in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  // A committed transaction is in the WAL, or was checkpointed into the database, which a
  // checkpoint syncs (in both synchronous modes): syncing the WAL file makes every commit
  // durable, without waiting for readers as a checkpoint would.
  sqlite3_file* wal = nullptr;
  if (sqlite3_file_control(db_.get(), "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
      wal == nullptr || wal->pMethods == nullptr)
    return storage_failure("sync: the write-ahead log is not open");
  if (const int rc = wal->pMethods->xSync(wal, SQLITE_SYNC_FULL); rc != SQLITE_OK)
    return storage_failure(std::string("sync the write-ahead log: ") + sqlite3_errstr(rc));
  return StoreResult{};
}

StoreResult SqliteSessionStore::commit() {
  try {
    return commit_transaction();
  } catch (...) {
    // Out of memory while flushing or naming an error: nothing of the unit may stay.
    end_transaction();
    aborted_ = false;
    if (sqlite3_get_autocommit(db_.get()) == 0) {
      StatementScope scope(rollback_);
      (void)sqlite3_step(scope.get());
    }
    return StoreResult{StoreStatus::storage_failure};
  }
}

StoreResult SqliteSessionStore::commit_transaction() {
  if (!in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  (void)transaction_lost();
  put_back_handed_out();  // a window moved but never staged is not the unit's
  StoreResult flushed;
  if (!aborted_) flushed = flush_write_back();
  if (!flushed.ok()) {
    end_transaction();
    (void)transaction_lost();
    if (sqlite3_get_autocommit(db_.get()) == 0) (void)run(rollback_);
    aborted_ = false;
    return flushed;
  }
  if (std::exchange(aborted_, false)) {
    end_transaction();
    // Lost (SQLite ended it) or given up (a failed ROLLBACK TO): make sure nothing of it stays.
    if (sqlite3_get_autocommit(db_.get()) == 0) (void)run(rollback_);
    return StoreResult{StoreStatus::storage_failure};
  }
  StoreResult r = run(commit_);  // COMMIT releases an open savepoint with the transaction
  aborted_ = false;              // set by run() if SQLite rolled the COMMIT back: over either way
  end_transaction(r.ok());
  if (!r.ok() && sqlite3_get_autocommit(db_.get()) == 0) {
    // COMMIT can fail and leave the transaction open (e.g. BUSY): end it, so that a failed
    // commit means "nothing of the unit was stored", as SessionStore promises.
    StatementScope scope(rollback_);
    (void)sqlite3_step(scope.get());
  }
  return r;
}

void SqliteSessionStore::end_transaction(bool committed) noexcept {
  in_transaction_ = false;
  in_savepoint_ = false;
  sql_savepoint_ = false;
  handed_out_.session = nullptr;
  if (committed) {
    write_back_.committed(options_.cached_devices);
  } else {
    write_back_.clear();
  }
}

StoreResult SqliteSessionStore::rollback() {
  if (!in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  (void)transaction_lost();
  end_transaction();
  // Lost: SQLite already rolled back. Given up after a failed ROLLBACK TO: roll back now.
  if (std::exchange(aborted_, false) && sqlite3_get_autocommit(db_.get()) != 0)
    return StoreResult{};
  return run(rollback_);
}

StoreResult SqliteSessionStore::savepoint() {
  if (!in_transaction_ || in_savepoint_) return StoreResult{StoreStatus::transaction_misuse};
  // Outside a transaction SAVEPOINT would open a new one that commits on RELEASE: never run it
  // once SQLite has ended ours.
  if (transaction_lost()) return StoreResult{StoreStatus::storage_failure};
  // Only marked: SQLite's SAVEPOINT is opened when a statement first writes inside it
  // (before_direct_write); the states' changes are undone by the write-back itself.
  write_back_.mark();
  in_savepoint_ = true;
  sql_savepoint_ = false;
  return StoreResult{};
}

StoreResult SqliteSessionStore::before_direct_write() {
  if (!in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  if (transaction_lost()) return StoreResult{StoreStatus::storage_failure};
  if (!in_savepoint_ || sql_savepoint_) return StoreResult{};
  StoreResult r = run(savepoint_);
  sql_savepoint_ = r.ok();
  return r;
}

StoreResult SqliteSessionStore::release_savepoint() {
  if (!in_savepoint_) return StoreResult{StoreStatus::transaction_misuse};
  in_savepoint_ = false;
  const bool sql = std::exchange(sql_savepoint_, false);
  if (transaction_lost()) {
    ++epoch_;
    put_back_handed_out();
    write_back_.undo();
    return StoreResult{StoreStatus::storage_failure};
  }
  StoreResult r = sql ? run(release_) : StoreResult{};
  if (!r.ok()) {
    // Keep the promise that a failed release has undone the message's writes: the states in
    // memory and the statements in SQLite alike. If SQLite cannot undo its part, the whole
    // transaction is given up (commit() rolls it back), so the two can never disagree.
    ++epoch_;
    put_back_handed_out();
    write_back_.undo();
    if (!transaction_lost() && (!run(rollback_to_).ok() || !run(release_).ok())) aborted_ = true;
    return r;
  }
  write_back_.keep();
  return r;
}

StoreResult SqliteSessionStore::rollback_to_savepoint() {
  if (!in_savepoint_) return StoreResult{StoreStatus::transaction_misuse};
  in_savepoint_ = false;
  ++epoch_;
  put_back_handed_out();
  write_back_.undo();
  const bool sql = std::exchange(sql_savepoint_, false);
  if (transaction_lost()) return StoreResult{};  // nothing left to undo; commit() will fail
  if (!sql) return StoreResult{};
  // ROLLBACK TO keeps the savepoint on SQLite's stack; RELEASE then removes it (empty now).
  StoreResult r = run(rollback_to_);
  if (r.ok()) r = run(release_);
  if (!r.ok()) aborted_ = true;  // the message's writes may still be there: lose the unit
  return r;
}

EdgeSession* SqliteSessionStore::find_session(const DevId& dev_id, std::uint16_t sessctr,
                                              std::uint64_t credential_generation) noexcept {
  if (!in_transaction_ || aborted_) return nullptr;
  put_back_handed_out();  // one handed out at a time (the contract: staged or forgotten first)
  EdgeSession* session = write_back_.checked_session(dev_id.str(), sessctr, credential_generation);
  if (session == nullptr) return nullptr;
  try {
    handed_out_.dev_id.assign(dev_id.str());
  } catch (...) {
    return nullptr;  // out of memory: a miss (the full path decides)
  }
  handed_out_.session = session;
  handed_out_.window = session->uplink_window;
  handed_out_.last_seen_ms = session->last_seen_ms;
  return session;
}

StoreResult SqliteSessionStore::stage_accept(const DevId& dev_id, const EdgeSession& session,
                                             std::uint32_t seq) {
  if (!in_transaction_ || handed_out_.session != &session || handed_out_.dev_id != dev_id.str() ||
      session.uplink_window.check(seq) != Error::replay) {
    put_back_handed_out();
    return StoreResult{StoreStatus::transaction_misuse};
  }
  if (transaction_lost()) {
    put_back_handed_out();
    return StoreResult{StoreStatus::storage_failure};
  }
  // Recorded before it is let go: if the record cannot be made, forget() still puts it back.
  write_back_.window_moved(dev_id.str(), *handed_out_.session, handed_out_.window,
                           handed_out_.last_seen_ms);
  handed_out_.session = nullptr;
  return StoreResult{};
}

void SqliteSessionStore::forget(const DevId& dev_id) noexcept {
  if (handed_out_.session != nullptr && handed_out_.dev_id == dev_id.str()) put_back_handed_out();
}

void SqliteSessionStore::note_checked(const DevId& dev_id,
                                      std::uint64_t credential_generation) noexcept {
  if (in_transaction_) write_back_.mark_checked(dev_id.str(), credential_generation);
}

void SqliteSessionStore::put_back_handed_out() noexcept {
  if (handed_out_.session == nullptr) return;
  handed_out_.session->uplink_window = handed_out_.window;
  handed_out_.session->last_seen_ms = handed_out_.last_seen_ms;
  handed_out_.session = nullptr;
}

StoreResult SqliteSessionStore::count_established(std::uint64_t& sessions,
                                                  std::uint64_t& unreadable) {
  sessions = 0;
  unreadable = 0;
  const SqliteStatement all(db_.get(), "SELECT state FROM device_state");
  if (!all.ok()) return failure();
  EdgeDeviceState state;
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(all.get())) == SQLITE_ROW) {
    const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(all.get(), 0));
    const auto size = static_cast<std::size_t>(sqlite3_column_bytes(all.get(), 0));
    if (decode_device_state(ByteView(data, size), nullptr, state) == StateCodecError::ok) {
      sessions += state.established_count;
    } else {
      ++unreadable;
    }
  }
  sqlite3_reset(all.get());
  return rc == SQLITE_DONE ? StoreResult{} : failure();
}

}  // namespace dsekp::edge
