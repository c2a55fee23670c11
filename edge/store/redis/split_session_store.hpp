// A SessionStore whose device states live in one store (the shared Redis store) while the
// transactions also span a second, local one (the edge's SQLite state database), because the
// sinks write each accepted frame's row on the local database's connection inside the open
// transaction (edge/service/sink_writer.hpp): the telemetry row and the CSV journal line.
//
// begin(), savepoint(), release_savepoint() and rollback_to_savepoint() go to both (the local
// one first); load(), save() and remove() go to the state store only.
//
// commit(): the state store first, then the local one. Why this order: a state commit can fail
// with generation_conflict (another edge accepted first), and local rows committed before it
// could not be taken back: the reading would be recorded twice. State first, the worst case is
// the other one: the process dies (SIGKILL, power) after the state commit and before the local
// commit, or the local commit fails. The frame is then accepted in the shared state (its
// redelivery is a replay) but its row is not stored: that reading is LOST. The window is the
// local SQLite commit (WAL, no fsync at synchronous=NORMAL: microseconds); docs/SCALING.md
// ("Running several edges") discusses it and the fix (rows in the same Redis script). A failed
// state commit rolls the local transaction back (nothing of the unit stays anywhere).
//
// Not thread-safe, like the stores it joins.
#pragma once

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
  StoreResult begin() override;
  StoreResult commit() override;
  StoreResult rollback() override;
  [[nodiscard]] bool in_transaction() const noexcept override { return state_.in_transaction(); }
  StoreResult savepoint() override;
  StoreResult release_savepoint() override;
  StoreResult rollback_to_savepoint() override;
  [[nodiscard]] bool in_savepoint() const noexcept override { return state_.in_savepoint(); }

  /// Local commits that failed after their state had committed (readings lost, see above).
  [[nodiscard]] std::uint64_t local_commit_failures() const noexcept { return local_failures_; }

 private:
  SessionStore& state_;
  SessionStore& local_;
  std::uint64_t local_failures_ = 0;
};

}  // namespace dsekp::edge
