// The device states a store transaction has changed, held in memory until it commits: a batch
// writes each device's state once at its commit however many of its messages changed it, and a
// message undone alone (a savepoint rolled back) costs no statement either. SqliteSessionStore
// reads its loads through it and flushes it in commit().
//
// An entry is the newest state of one device in the open transaction or its removal, with the
// generation the database held when the transaction first touched the device (the flush writes
// conditionally on it) and the generation the transaction's own saves have reached. A savepoint
// remembers each entry as it was before the savepoint's first change of it, so undo() restores
// exactly the entries of before.
//
// Each state lives in its own heap object, so that moving an entry (into a savepoint's record,
// back on undo) moves a pointer, not the whole state with its windows and keys; a state a
// change replaced is reused for the next change of the transaction. The states hold session
// keys: their SecretBytes wipe them when the transaction ends (clear()) and they are freed.
//
// Entries may outlive their transaction: committed() keeps them as clean images of what the
// database holds, for the next transactions to read instead of the database (the store drops
// them when another connection has written: SqliteSessionStore::begin). The commit writes only
// the entries the open transaction changed (dirty).
//
// The uplink fast path (uplink_session_cache.hpp) moves a window inside an entry instead of
// saving the whole state: it may do so only in an entry the full path has checked against the
// registry's credentials in this transaction (mark_checked; any later save or removal of the
// device drops the mark), and a savepoint undone puts the window of before back
// (window_moved).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dsekp/edge_session.hpp"
#include "edge/string_map.hpp"

namespace dsekp::edge {

class StateWriteBack {
 public:
  struct Entry {
    std::unique_ptr<EdgeDeviceState> state;  // null: the device is removed
    std::uint64_t stored_generation = 0;     // the database's when first touched (0: no row)
    std::uint64_t generation = 0;            // as the transaction sees it (0: absent)
    std::uint64_t updated_ms = 0;
    // The registry credential generation the full path checked this state against, if it did.
    std::optional<std::uint64_t> checked_credential_generation;
    bool dirty = true;  // changed by the open transaction (false: as the database holds it)
    [[nodiscard]] bool removed() const noexcept { return state == nullptr; }
  };

  StateWriteBack() = default;
  StateWriteBack(const StateWriteBack&) = delete;
  StateWriteBack& operator=(const StateWriteBack&) = delete;
  ~StateWriteBack() { clear(); }

  /// The device's entry in the open transaction, or null if it has none.
  [[nodiscard]] const Entry* find(std::string_view dev_id) const;
  /// The device's entry becomes a copy of `state` under the given generations.
  void save(std::string_view dev_id, const EdgeDeviceState& state, std::uint64_t stored_generation,
            std::uint64_t generation, std::uint64_t updated_ms);
  /// The device's entry becomes its removal.
  void remove(std::string_view dev_id, std::uint64_t stored_generation);

  /// The device's entry (which must exist) was checked against the registry's credential
  /// generation `credential_generation`: its established sessions are current under it.
  void mark_checked(std::string_view dev_id, std::uint64_t credential_generation) noexcept;
  /// The established session `sessctr` of the device's entry, if the entry was checked against
  /// `credential_generation`; else null. Valid until the entry changes.
  [[nodiscard]] EdgeSession* checked_session(std::string_view dev_id, std::uint16_t sessctr,
                                             std::uint64_t credential_generation) noexcept;
  /// `session` (of the device's entry) has had its window moved from `window_before` and its
  /// last_seen_ms from `last_seen_before`: undo() of the open savepoint puts them back.
  void window_moved(std::string_view dev_id, EdgeSession& session,
                    const ReplayWindow& window_before, std::uint64_t last_seen_before);

  /// A savepoint begins: changes from now on can be undone alone.
  void mark();
  /// The savepoint's changes stay (part of the transaction).
  void keep() noexcept;
  /// The savepoint's changes are undone.
  void undo();
  /// The transaction committed: removals are dropped and the other entries kept as clean images
  /// of what the database now holds, unless there are more than `keep_at_most` of them (then
  /// every entry is dropped, as by clear()).
  void committed(std::size_t keep_at_most) noexcept;
  /// Every entry is dropped (a transaction that did not commit, or a database changed by
  /// another connection).
  void clear() noexcept;

  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  /// Calls `f(dev_id, entry)` once for every entry the open transaction changed (dirty), in
  /// no particular order.
  void for_each_dirty(const std::function<void(const std::string&, const Entry&)>& f);

 private:
  void put(std::string_view dev_id, Entry entry);
  void recycle(std::unique_ptr<EdgeDeviceState> state) noexcept;

  // One change the open savepoint made, as undo() needs it: a whole entry replaced (`entry`:
  // the entry of before, nullopt if it had none), or a window moved (`session` is not null).
  struct Before {
    std::string dev_id;
    std::optional<Entry> entry;
    EdgeSession* session = nullptr;
    ReplayWindow window;
    std::uint64_t last_seen_ms = 0;
  };

  Before& record(std::string_view dev_id);  // a new record of the open savepoint

  StringMap<Entry> entries_;
  bool marked_ = false;
  std::vector<Before> before_;  // in the order of the changes
  // The devices the open transaction made dirty (some perhaps clean again, or twice): the
  // commit then visits only these, not every kept entry.
  std::vector<std::string> dirty_;
  // States no entry holds any more, reused by the next save() of the transaction.
  std::vector<std::unique_ptr<EdgeDeviceState>> spare_;
};

}  // namespace dsekp::edge
