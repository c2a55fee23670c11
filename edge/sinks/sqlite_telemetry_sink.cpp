// SqliteTelemetrySink (see sqlite_telemetry_sink.hpp).
#include "edge/sinks/sqlite_telemetry_sink.hpp"

#include <string>

#include "dsekp/bytes.hpp"
#include "edge/sqlite/sqlite_statement.hpp"

namespace dsekp::edge::sinks {
namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS telemetry("
    "id INTEGER PRIMARY KEY, mode TEXT NOT NULL, encoding TEXT NOT NULL, dev_id TEXT NOT NULL,"
    " sessctr INTEGER NOT NULL, seq INTEGER NOT NULL, sendts_ms INTEGER NOT NULL,"
    " recvts_ms INTEGER NOT NULL, latency_ms INTEGER NOT NULL, payload_size INTEGER NOT NULL,"
    " plaintext BLOB NOT NULL, recvts_us INTEGER)";

// A table created before the column existed gets it (NULL in the old rows).
constexpr const char* kAddRecvtsUs = "ALTER TABLE telemetry ADD COLUMN recvts_us INTEGER";

constexpr const char* kInsert =
    "INSERT INTO telemetry(mode, encoding, dev_id, sessctr, seq, sendts_ms, recvts_ms,"
    " latency_ms, payload_size, plaintext, recvts_us)"
    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

constexpr const char* kLookupIndex =
    "CREATE INDEX IF NOT EXISTS telemetry_recvts_us ON telemetry(recvts_us)";
constexpr const char* kLookup =
    "SELECT 1 FROM telemetry WHERE recvts_us = ?1 AND mode = ?2 AND dev_id = ?3 AND sessctr = ?4"
    " AND seq = ?5 LIMIT 1";

int bind_mode(sqlite3_stmt* statement, int index, Mode mode) noexcept {
  const std::string_view name = mode_name(mode);
  return sqlite3_bind_text(statement, index, name.data(), static_cast<int>(name.size()),
                           SQLITE_STATIC);
}

}  // namespace

std::unique_ptr<SqliteTelemetrySink> SqliteTelemetrySink::open(sqlite3* db, std::string& error) {
  if (sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) {
    error = std::string("telemetry table: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  if (!sqlite::has_column(db, "telemetry", "recvts_us") &&
      sqlite3_exec(db, kAddRecvtsUs, nullptr, nullptr, nullptr) != SQLITE_OK) {
    error = std::string("telemetry table: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  sqlite3_stmt* insert = nullptr;
  if (sqlite3_prepare_v2(db, kInsert, -1, &insert, nullptr) != SQLITE_OK) {
    error = std::string("telemetry insert: ") + sqlite3_errmsg(db);
    return nullptr;
  }
  return std::unique_ptr<SqliteTelemetrySink>(new SqliteTelemetrySink(db, insert));
}

SqliteTelemetrySink::~SqliteTelemetrySink() {
  drop_staged(0);
  sqlite3_finalize(insert_);
  sqlite3_finalize(lookup_);
}

bool SqliteTelemetrySink::enable_lookup(std::string& error) {
  if (lookup_ != nullptr) return true;
  if (sqlite3_exec(db_, kLookupIndex, nullptr, nullptr, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(db_, kLookup, -1, &lookup_, nullptr) != SQLITE_OK) {
    error = std::string("telemetry lookup: ") + sqlite3_errmsg(db_);
    return false;
  }
  return true;
}

int SqliteTelemetrySink::contains(const AcceptedFrame& row) {
  if (lookup_ == nullptr) return -1;
  sqlite3_reset(lookup_);
  sqlite3_clear_bindings(lookup_);
  const bool bound =
      sqlite3_bind_int64(lookup_, 1, static_cast<sqlite3_int64>(row.recvts_us)) == SQLITE_OK &&
      bind_mode(lookup_, 2, row.mode) == SQLITE_OK &&
      sqlite3_bind_text(lookup_, 3, row.dev_id.c_str(), -1, SQLITE_TRANSIENT) == SQLITE_OK &&
      sqlite3_bind_int64(lookup_, 4, row.sessctr) == SQLITE_OK &&
      sqlite3_bind_int64(lookup_, 5, row.seq) == SQLITE_OK;
  const int rc = bound ? sqlite3_step(lookup_) : SQLITE_ERROR;
  sqlite3_reset(lookup_);
  return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

bool SqliteTelemetrySink::write(const AcceptedFrame& row) {
  if (staged_count_ == staged_.size()) staged_.emplace_back();
  AcceptedFrame& copy = staged_[staged_count_++];
  // Only what the table keeps (the CSV's base64 fields are not copied); assign() reuses the
  // buffers of an earlier unit.
  copy.mode = row.mode;
  copy.encoding = row.encoding;
  copy.dev_id.assign(row.dev_id);
  copy.sessctr = row.sessctr;
  copy.seq = row.seq;
  copy.sendts_ms = row.sendts_ms;
  copy.recvts_ms = row.recvts_ms;
  copy.recvts_us = row.recvts_us;
  copy.latency_ms = row.latency_ms;
  copy.payload_size = row.payload_size;
  copy.plaintext.assign(row.plaintext.begin(), row.plaintext.end());
  return true;
}

bool SqliteTelemetrySink::before_commit() noexcept {
  // SQLite may have ended the transaction by itself after an error: an insert outside it would
  // commit on its own, apart from the state, so refuse (the unit is rolled back).
  if (staged_count_ > 0 && sqlite3_get_autocommit(db_) != 0) {
    set_refusal(refusal_,
                "telemetry: the store transaction has ended (SQLite rolled it back "
                "after an error)");
    return false;
  }
  for (std::size_t i = 0; i < staged_count_; ++i) {
    if (!insert(staged_[i])) {
      try {
        refusal_ = std::string("telemetry insert: ") + sqlite3_errmsg(db_);
      } catch (...) {
        refusal_.clear();  // out of memory: no text
      }
      return false;
    }
  }
  return true;
}

void SqliteTelemetrySink::drop_staged(std::size_t from) noexcept {
  for (std::size_t i = from; i < staged_count_; ++i)
    secure_wipe(MutableByteView(staged_[i].plaintext.data(), staged_[i].plaintext.size()));
  if (from < staged_count_) staged_count_ = from;
  if (savepoint_ > staged_count_) savepoint_ = staged_count_;
}

bool SqliteTelemetrySink::insert(const AcceptedFrame& row) {
  // Every parameter is bound again below, so the previous row's bindings need no clearing.
  sqlite3_reset(insert_);
  const bool bound =
      bind_mode(insert_, 1, row.mode) == SQLITE_OK &&
      sqlite3_bind_text(insert_, 2, row.encoding == Encoding::json ? "json" : "compact", -1,
                        SQLITE_STATIC) == SQLITE_OK &&
      sqlite3_bind_text(insert_, 3, row.dev_id.data(), static_cast<int>(row.dev_id.size()),
                        SQLITE_STATIC) == SQLITE_OK &&
      sqlite3_bind_int64(insert_, 4, row.sessctr) == SQLITE_OK &&
      sqlite3_bind_int64(insert_, 5, row.seq) == SQLITE_OK &&
      sqlite3_bind_int64(insert_, 6, static_cast<sqlite3_int64>(row.sendts_ms)) == SQLITE_OK &&
      sqlite3_bind_int64(insert_, 7, static_cast<sqlite3_int64>(row.recvts_ms)) == SQLITE_OK &&
      sqlite3_bind_int64(insert_, 8, row.latency_ms) == SQLITE_OK &&
      sqlite3_bind_int64(insert_, 9, static_cast<sqlite3_int64>(row.payload_size)) == SQLITE_OK &&
      // A null pointer would bind NULL: an empty reading is an empty blob, never NULL.
      sqlite3_bind_blob(insert_, 10,
                        row.plaintext.empty() ? "" : static_cast<const void*>(row.plaintext.data()),
                        static_cast<int>(row.plaintext.size()), SQLITE_STATIC) == SQLITE_OK &&
      sqlite3_bind_int64(insert_, 11, static_cast<sqlite3_int64>(row.recvts_us)) == SQLITE_OK;
  const bool ok = bound && sqlite3_step(insert_) == SQLITE_DONE;
  sqlite3_reset(insert_);
  return ok;
}

}  // namespace dsekp::edge::sinks
