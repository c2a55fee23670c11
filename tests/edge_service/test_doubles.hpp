// Test doubles around EdgeService: a sink that records committed rows (and inserts them into the
// session store's own database just before the commit, as the SQLite telemetry sink does, to
// prove they share its transaction) and
// can be told to fail or throw; and a session store that passes through to SQLite but can be
// told to fail a load, a begin, a save or a commit, to throw, or to let another writer in.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "edge/service/sink_writer.hpp"
#include "edge/store/sqlite_session_store.hpp"

namespace dsekp::edge::testing {

class RecordingSink final : public SinkWriter {
 public:
  /// Inserts every row into table test_rows on `db` too (the session store's connection).
  void attach(sqlite3* db) {
    db_ = db;
    ASSERT_EQ(sqlite3_exec(db_,
                           "CREATE TABLE IF NOT EXISTS test_rows(mode TEXT, dev_id TEXT,"
                           " sessctr INTEGER, seq INTEGER)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }

  bool write(const AcceptedFrame& row) override {
    ++writes;
    if (fail) return false;
    if (fail_next > 0) {
      --fail_next;
      return false;
    }
    if (throw_on_write) throw std::runtime_error("sink exploded");
    if (sqlite3_get_autocommit(db_) != 0) return false;  // no open unit: refuse, as a real sink
    staged_.push_back(row);
    return true;
  }
  // As the telemetry sink does: the unit's rows go into the database just before its commit.
  bool before_commit() noexcept override {
    if (!refuse_before_commit.empty()) return false;
    if (staged_.empty()) return true;
    if (sqlite3_get_autocommit(db_) != 0) return false;
    for (const AcceptedFrame& row : staged_) {
      sqlite3_stmt* s = nullptr;
      sqlite3_prepare_v2(db_, "INSERT INTO test_rows VALUES(?1, ?2, ?3, ?4)", -1, &s, nullptr);
      const std::string_view mode = mode_name(row.mode);
      sqlite3_bind_text(s, 1, mode.data(), static_cast<int>(mode.size()), SQLITE_STATIC);
      sqlite3_bind_text(s, 2, row.dev_id.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(s, 3, row.sessctr);
      sqlite3_bind_int64(s, 4, row.seq);
      const bool ok = sqlite3_step(s) == SQLITE_DONE;
      sqlite3_finalize(s);
      if (!ok) return false;
    }
    return true;
  }
  void committed() noexcept override {
    rows.insert(rows.end(), staged_.begin(), staged_.end());
    staged_.clear();
  }
  void rolled_back() noexcept override {
    staged_.clear();
    ++rollbacks;
  }
  void savepoint() noexcept override { mark_ = staged_.size(); }
  void rolled_back_to_savepoint() noexcept override {
    staged_.resize(std::min(mark_, staged_.size()));
    ++rollbacks;
  }

  /// Rows in test_rows, i.e. what the database holds after the commits.
  std::int64_t table_rows() const {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db_, "SELECT count(*) FROM test_rows", -1, &s, nullptr);
    std::int64_t n = -1;
    if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
  }

  std::string refusal() const override { return refuse_before_commit; }

  std::vector<AcceptedFrame> rows;   // committed rows, in order
  std::string refuse_before_commit;  // not empty: before_commit() refuses, saying this
  bool fail = false;
  int fail_next = 0;  // that many writes fail (then they work again)
  bool throw_on_write = false;
  int writes = 0;
  int rollbacks = 0;

 private:
  sqlite3* db_ = nullptr;
  std::vector<AcceptedFrame> staged_;
  std::size_t mark_ = 0;
};

/// Passes everything to `backing`; the switches make the next calls fail as a broken disk would
/// (a failed commit rolls the backing transaction back, as SessionStore promises).
class ScriptableStore final : public SessionStore {
 public:
  explicit ScriptableStore(SessionStore& backing) : backing_(backing) {}

  StoreResult load(const DevId& dev_id, EdgeDeviceState& out, std::uint64_t& generation) override {
    if (throw_on_load) throw std::bad_alloc();
    if (fail_load) return StoreResult{StoreStatus::storage_failure};
    return backing_.load(dev_id, out, generation);
  }
  StoreResult save(const DevId& dev_id, const EdgeDeviceState& state, std::uint64_t now_ms,
                   std::uint64_t& generation) override {
    if (fail_save) return StoreResult{StoreStatus::storage_failure};
    if (fail_next_saves > 0) {
      --fail_next_saves;
      return StoreResult{StoreStatus::storage_failure};
    }
    return backing_.save(dev_id, state, now_ms, generation);
  }
  StoreResult remove(const DevId& dev_id) override { return backing_.remove(dev_id); }
  StoreResult make_durable() override { return backing_.make_durable(); }
  StoreResult begin() override {
    if (before_begin) std::exchange(before_begin, nullptr)();
    if (fail_begin) return StoreResult{StoreStatus::storage_failure};
    return backing_.begin();
  }
  StoreResult commit() override {
    ++commits;
    if (conflict_next_commits > 0) {
      --conflict_next_commits;
      (void)backing_.rollback();
      return StoreResult{StoreStatus::generation_conflict};
    }
    if (fail_next_commits > 0) {
      --fail_next_commits;
      (void)backing_.rollback();
      return StoreResult{StoreStatus::storage_failure};
    }
    if (!fail_commit) return backing_.commit();
    (void)backing_.rollback();
    return StoreResult{StoreStatus::storage_failure};
  }
  StoreResult rollback() override { return backing_.rollback(); }
  [[nodiscard]] bool in_transaction() const noexcept override { return backing_.in_transaction(); }
  StoreResult savepoint() override { return backing_.savepoint(); }
  StoreResult release_savepoint() override { return backing_.release_savepoint(); }
  StoreResult rollback_to_savepoint() override { return backing_.rollback_to_savepoint(); }
  [[nodiscard]] bool in_savepoint() const noexcept override { return backing_.in_savepoint(); }
  // The backing store's uplink fast path (a DATA frame on it skips load() and save(), so their
  // switches above do not apply to it), unless switched off.
  [[nodiscard]] UplinkSessionCache* uplink_cache() noexcept override {
    return uplink_path ? backing_.uplink_cache() : nullptr;
  }

  bool uplink_path = true;
  bool throw_on_load = false;
  bool fail_load = false;
  bool fail_begin = false;
  bool fail_save = false;
  bool fail_commit = false;
  int fail_next_commits = 0;      // that many commits fail (then they work again)
  int fail_next_saves = 0;        // that many saves fail (then they work again)
  int conflict_next_commits = 0;  // that many commits conflict (another edge was first)
  int commits = 0;                // commit() calls
  /// Runs once, just before the next begin(): another writer acting between load and save.
  std::function<void()> before_begin;

 private:
  SessionStore& backing_;
};

}  // namespace dsekp::edge::testing
