// A write-through working set in front of another SessionStore: states the edge has loaded or
// saved stay in memory in encoded form (CompactStateMap), so a frame costs a decode instead of
// a database lookup, and every save still reaches the backing store before it returns.
//
// Inside a transaction, saves and removes are staged and reach the working set only when the
// backing store has committed them; a rollback or a failed commit leaves the working set as it
// was, which is what the backing store then holds. A savepoint marks the staged list; rolling
// back to it drops what was staged after the mark. A generation_conflict drops the device from
// the working set: another writer (another edge on a shared store) has a newer state, and the
// next load fetches it; a failed commit drops every device the unit staged, for the same reason.
// The edge daemon does not put this cache in front of the shared Redis store: each frame must
// be judged on the window as the other edges left it, so the copy would save only the decode of
// a state that is fetched anyway (docs/SCALING.md, "Running several edges"). Unbounded: about 225
// bytes per device with one session (measured by `dsekp bench sessions`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compact_state_map.hpp"
#include "session_store.hpp"

namespace dsekp::edge {

class CachedSessionStore final : public SessionStore {
 public:
  /// `backing` must outlive this object.
  explicit CachedSessionStore(SessionStore& backing) noexcept : backing_(backing) {}
  ~CachedSessionStore() override { discard_staged(); }

  StoreResult load(const DevId& dev_id, EdgeDeviceState& out, std::uint64_t& generation) override;
  StoreResult save(const DevId& dev_id, const EdgeDeviceState& state, std::uint64_t now_ms,
                   std::uint64_t& generation) override;
  StoreResult remove(const DevId& dev_id) override;
  StoreResult begin() override;
  StoreResult commit() override;
  StoreResult rollback() override;
  [[nodiscard]] bool in_transaction() const noexcept override { return backing_.in_transaction(); }
  StoreResult savepoint() override;
  StoreResult release_savepoint() override;
  StoreResult rollback_to_savepoint() override;
  [[nodiscard]] bool in_savepoint() const noexcept override { return backing_.in_savepoint(); }

  [[nodiscard]] const CompactStateMap& working_set() const noexcept { return cache_; }

 private:
  struct Staged {
    std::string dev_id;
    std::vector<std::uint8_t> blob;  // empty: removed
    std::uint64_t generation = kAbsentGeneration;
  };
  void remember(const DevId& dev_id, const EdgeDeviceState& state, std::uint64_t generation);
  void stage_or_apply(Staged staged);
  void apply(const Staged& staged);
  void discard_staged() noexcept;
  void drop_after_mark() noexcept;

  SessionStore& backing_;
  CompactStateMap cache_;
  std::vector<Staged> staged_;
  std::size_t savepoint_mark_ = 0;     // staged_.size() at savepoint()
  std::vector<std::uint8_t> scratch_;  // encode buffer, wiped after use
};

}  // namespace dsekp::edge
