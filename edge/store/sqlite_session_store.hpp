// SessionStore on one SQLite database file (WAL mode), for a single edge.
//
// Table device_state(dev_id TEXT PRIMARY KEY, state BLOB, generation INTEGER, updated_ms INTEGER):
// `state` is the device_state_codec encoding. The file is created with mode 0600 (it holds
// session keys); SQLite gives its -wal and -shm files the same mode.
//
// Inside a transaction the states are written back (state_write_back.hpp): save() and remove()
// change an entry in memory, load() reads it from there, and commit() writes each changed
// device once, conditional on the generation the transaction first found, then commits. So a
// batch costs one statement per device it changed, not one per message.
//
// Uplink fast path (UplinkSessionCache, uplink_session_cache.hpp): once the full path has
// saved a device's state in the open transaction and checked it against the registry's
// credentials (note_checked), a later DATA frame of the same transaction under one of its
// established sessions moves that session's window in the write-back entry itself: no copy of
// the state in or out, no save. With SqliteStoreOptions::cached_devices the committed entries,
// and whether they were checked, are kept for the next transactions; begin() drops them all if
// another connection has committed since (PRAGMA data_version: `dsekp keys reset-state`,
// `keys remove`), and a transaction that does not commit drops them too. So a kept state is
// always what the database holds, and the check stays valid as long as the registry's
// credential generation is the same: the recorded one changes only with a save or removal of
// the state (which drops the mark) or on another connection.
//
// Savepoints: a savepoint is a mark in the write-back, and SQLite's own SAVEPOINT (one name,
// one level) is opened only when a statement writes inside it: every writer on this connection
// other than the store (the credential generations) calls before_direct_write() first. The
// sinks in this database stage their rows and insert them just before the commit, outside any
// savepoint (sink_writer.hpp). Rolling back to a message's savepoint removes what that message
// wrote and nothing else.
//
// Durability (SqliteStoreOptions::synchronous):
//   normal (default): a committed transaction survives the edge process dying in any way
//     (SIGKILL, abort, OOM kill): in WAL mode COMMIT returns only after the WAL frames were
//     written to the file, so the kernel has them. It does not survive power loss or a kernel
//     crash: the WAL is only fsync'd at checkpoints, so the last transactions before such a
//     failure may be rolled back (the database stays consistent, never corrupt). After a power
//     loss the edge may then hold an older replay window and accept a frame a second time.
//   full: the WAL is fsync'd at every commit, so commits also survive power loss, at the cost
//     of one fsync per commit.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edge/sqlite/sqlite_statement.hpp"
#include "session_store.hpp"
#include "state_write_back.hpp"
#include "uplink_session_cache.hpp"

namespace dsekp::edge {

struct SqliteStoreOptions {
  enum class Synchronous : std::uint8_t { normal, full };
  Synchronous synchronous = Synchronous::normal;
  /// How long a write waits for another connection's lock (e.g. a reader) before failing.
  int busy_timeout_ms = 5000;
  /// Devices whose committed state stays in memory between transactions (the whole decoded
  /// state, about 3.6 KB each, session keys included), so that their next batch reads no row
  /// and its DATA frames all take the fast path. Past it, every kept state is dropped and the
  /// next transactions read again. 0: nothing kept.
  std::size_t cached_devices = 0;
};

class SqliteSessionStore final : public SessionStore, public UplinkSessionCache {
 public:
  /// Opens or creates the database at `path`. Returns null and sets `error` on failure.
  static std::unique_ptr<SqliteSessionStore> open(const std::string& path,
                                                  const SqliteStoreOptions& options,
                                                  std::string& error);
  ~SqliteSessionStore() override;
  SqliteSessionStore(const SqliteSessionStore&) = delete;
  SqliteSessionStore& operator=(const SqliteSessionStore&) = delete;

  StoreResult load(const DevId& dev_id, EdgeDeviceState& out, std::uint64_t& generation) override;
  StoreResult save(const DevId& dev_id, const EdgeDeviceState& state, std::uint64_t now_ms,
                   std::uint64_t& generation) override;
  StoreResult remove(const DevId& dev_id) override;
  StoreResult begin() override;
  StoreResult commit() override;
  StoreResult rollback() override;
  [[nodiscard]] bool in_transaction() const noexcept override { return in_transaction_; }
  /// A number that changes whenever what the database holds for this connection may have
  /// changed other than by the reader's own writes: at every begin() and every
  /// rollback_to_savepoint(); 0 outside a transaction. A reader on this connection may keep what
  /// it read while the number stays the same (and forget what it writes itself), since BEGIN
  /// IMMEDIATE holds the write lock and no other process can change the database meanwhile.
  [[nodiscard]] std::uint64_t read_epoch() const noexcept { return in_transaction_ ? epoch_ : 0; }
  StoreResult savepoint() override;
  StoreResult release_savepoint() override;
  StoreResult rollback_to_savepoint() override;
  /// Syncs the write-ahead log file (with synchronous=full the commits were durable already).
  StoreResult make_durable() override;
  [[nodiscard]] bool in_savepoint() const noexcept override { return in_savepoint_; }

  [[nodiscard]] UplinkSessionCache* uplink_cache() noexcept override { return this; }
  [[nodiscard]] EdgeSession* find_session(const DevId& dev_id, std::uint16_t sessctr,
                                          std::uint64_t credential_generation) noexcept override;
  StoreResult stage_accept(const DevId& dev_id, const EdgeSession& session,
                           std::uint32_t seq) override;
  void forget(const DevId& dev_id) noexcept override;
  void note_checked(const DevId& dev_id, std::uint64_t credential_generation) noexcept override;

  /// Called by another writer on this connection before it runs a statement that writes inside
  /// the open transaction: opens SQLite's savepoint if a savepoint is marked, so that
  /// rollback_to_savepoint() undoes that statement too. transaction_misuse outside a
  /// transaction.
  StoreResult before_direct_write();

  /// The connection, for writers whose rows must commit in the same transaction as a state
  /// (the sink of accepted frames, in the same database file): between begin() and commit(),
  /// statements they run on it are part of the transaction.
  [[nodiscard]] sqlite3* connection() const noexcept { return db_.get(); }
  /// Counts the established sessions of every stored state (decoding each: O(devices), meant
  /// for start-up; the daemon then follows HandleResult::established_delta). A state that does
  /// not decode is not counted and adds to `unreadable`.
  StoreResult count_established(std::uint64_t& sessions, std::uint64_t& unreadable);
  /// SQLite's message for the last storage_failure.
  [[nodiscard]] const std::string& last_error() const noexcept { return last_error_; }

 private:
  SqliteSessionStore(std::unique_ptr<sqlite3, sqlite::SqliteCloser> db,
                     const SqliteStoreOptions& options) noexcept;
  bool prepare_statements();
  StoreResult failure(StoreStatus status = StoreStatus::storage_failure);
  // True (and the unit marked aborted) when SQLite has ended the open transaction by itself,
  // e.g. after a sink's insert on the same connection hit a full disk.
  bool transaction_lost() noexcept;
  StoreResult run(const sqlite::SqliteStatement& statement);
  StoreResult write_state(const sqlite::SqliteStatement& statement, const DevId& dev_id,
                          std::uint64_t now_ms, std::uint64_t& generation);
  // The write-back's side of save(), and the device's generations as the transaction sees them.
  StoreResult save_in_transaction(const DevId& dev_id, const EdgeDeviceState& state,
                                  std::uint64_t now_ms, std::uint64_t& generation);
  StoreResult current_generations(const DevId& dev_id, std::uint64_t& stored,
                                  std::uint64_t& current);
  StoreResult flush_write_back();
  StoreResult commit_transaction();  // commit() but for its out-of-memory guard
  // The flags and the write-back once the transaction has ended; the write-back's entries are
  // kept only after a commit.
  void end_transaction(bool committed = false) noexcept;
  // Drops the kept states if another connection has committed since the last transaction.
  StoreResult forget_if_changed_elsewhere();
  void put_back_handed_out() noexcept;  // the handed-out session's window as it was found

  // Declared first so that it is closed after the statements are finalized.
  std::unique_ptr<sqlite3, sqlite::SqliteCloser> db_;
  sqlite::SqliteStatement load_;
  sqlite::SqliteStatement upsert_;      // save with kAnyGeneration
  sqlite::SqliteStatement insert_new_;  // save with kAbsentGeneration
  sqlite::SqliteStatement update_if_;   // save with a loaded generation
  sqlite::SqliteStatement remove_;
  sqlite::SqliteStatement generation_;
  sqlite::SqliteStatement flush_insert_;
  sqlite::SqliteStatement flush_update_;
  sqlite::SqliteStatement flush_remove_;
  sqlite::SqliteStatement begin_;
  sqlite::SqliteStatement commit_;
  sqlite::SqliteStatement rollback_;
  sqlite::SqliteStatement savepoint_;
  sqlite::SqliteStatement release_;
  sqlite::SqliteStatement rollback_to_;
  sqlite::SqliteStatement data_version_;
  SqliteStoreOptions options_;
  std::optional<std::int64_t> seen_data_version_;  // at the last begin()
  std::vector<std::uint8_t> blob_;                 // encode buffer, reused; wiped after every save
  bool in_transaction_ = false;
  std::uint64_t epoch_ = 0;  // read_epoch()
  bool in_savepoint_ = false;
  bool sql_savepoint_ = false;  // SQLite's SAVEPOINT is open (a direct write happened in it)
  StateWriteBack write_back_;
  // The session find_session() handed out, and its window before the caller moved it:
  // forget() puts it back, stage_accept() records it for an undo of the savepoint.
  struct HandedOut {
    std::string dev_id;
    EdgeSession* session = nullptr;  // null: none handed out
    ReplayWindow window;
    std::uint64_t last_seen_ms = 0;
  };
  HandedOut handed_out_;
  bool aborted_ = false;  // SQLite rolled the open transaction back after an error
  std::string last_error_;
};

}  // namespace dsekp::edge
