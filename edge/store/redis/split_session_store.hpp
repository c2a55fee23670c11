// A SessionStore whose device states live in one store (the shared Redis store) while the
// transactions also span a second, local one (the edge's SQLite state database), because the
// sinks write each accepted frame's row on the local database's connection inside the open
// transaction (edge/service/sink_writer.hpp): the telemetry row and the CSV log's committed end.
//
// begin(), savepoint(), release_savepoint() and rollback_to_savepoint() go to both (the local
// one first); load(), save() and remove() go to the state store only.
//
// commit(): the state store first, then the local one. Why this order: a state commit can fail
// with generation_conflict (another edge accepted first), and local rows committed before it
// could not be taken back: the reading would be recorded twice. State first, the gap is the
// other one: the process dies (SIGKILL, power) after the state commit and before the local
// commit, the local commit fails, or the state commit's reply is lost although Redis applied
// it. The frames are then accepted in the shared state (their redelivery is a replay) but their
// rows are not stored locally. The daemon closes that gap with a write-ahead: the state commit
// also writes the unit's rows to this edge's pending list in Redis (RedisSessionStore::
// set_pending_key), and a recovery (edge/daemon/pending_rows.hpp) re-inserts the rows the local
// database lacks: at start-up (a killed edge), and here, through the `recover` hook, at the
// begin() that follows any failed commit (a lost reply, a failed local commit), before the next
// state commit can replace the list. A failed state commit rolls the local transaction back.
//
// Not thread-safe, like the stores it joins.
#pragma once

#include <functional>
#include <string>

#include "edge/store/session_store.hpp"

namespace dsekp::edge {

class SplitSessionStore final : public SessionStore {
 public:
  /// Both must outlive this object.
  SplitSessionStore(SessionStore& state, SessionStore& local) noexcept
      : state_(state), local_(local) {}

  StoreResult load(const DevId& dev_id, EdgeDeviceState& out, std::uint64_t& generation) override {
    return state_.load(dev_id, out, generation);
  }
  StoreResult save(const DevId& dev_id, const EdgeDeviceState& state, std::uint64_t now_ms,
                   std::uint64_t& generation) override {
    return state_.save(dev_id, state, now_ms, generation);
  }
  StoreResult remove(const DevId& dev_id) override { return state_.remove(dev_id); }
  [[nodiscard]] UplinkSessionCache* uplink_cache() noexcept override {
    return state_.uplink_cache();
  }
  StoreResult begin() override;
  StoreResult commit() override;
  StoreResult rollback() override;
  [[nodiscard]] bool in_transaction() const noexcept override { return state_.in_transaction(); }
  StoreResult savepoint() override;
  StoreResult release_savepoint() override;
  StoreResult rollback_to_savepoint() override;
  [[nodiscard]] bool in_savepoint() const noexcept override { return state_.in_savepoint(); }
  /// Both: the states live in the shared store, the rows committed with them in the local one.
  StoreResult make_durable() override {
    if (StoreResult s = state_.make_durable(); !s.ok()) return s;
    return local_.make_durable();
  }

  /// Local commits that failed after their state had committed (their rows wait in the
  /// pending list for the recovery, see above).
  [[nodiscard]] std::uint64_t local_commit_failures() const noexcept { return local_failures_; }

  /// Runs (outside any transaction) at the begin() after a failed commit; false fails that
  /// begin() and keeps the recovery due. Unset: nothing to recover.
  void set_recover(std::function<bool()> recover) { recover_ = std::move(recover); }
  /// Runs between a successful state commit and the local commit (the daemon's test hold).
  void set_between_commits(std::function<void()> hook) { between_ = std::move(hook); }
  /// Whether the recovery is due (a commit failed since it last ran).
  [[nodiscard]] bool recovery_due() const noexcept { return recovery_due_; }

 private:
  SessionStore& state_;
  SessionStore& local_;
  std::uint64_t local_failures_ = 0;
  std::function<bool()> recover_;
  std::function<void()> between_;
  bool recovery_due_ = false;
};

}  // namespace dsekp::edge
