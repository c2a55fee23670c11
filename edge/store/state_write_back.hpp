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

  /// A savepoint begins: changes from now on can be undone alone.
  void mark();
  /// The savepoint's changes stay (part of the transaction).
  void keep() noexcept;
  /// The savepoint's changes are undone.
  void undo();
  /// The transaction ended (committed or rolled back): every entry is dropped.
  void clear() noexcept;

  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  /// Calls `f(dev_id, entry)` for every entry, in no particular order.
  void for_each(const std::function<void(const std::string&, const Entry&)>& f) const;

 private:
  void put(std::string_view dev_id, Entry entry);
  void recycle(std::unique_ptr<EdgeDeviceState> state) noexcept;

  StringMap<Entry> entries_;
  bool marked_ = false;
  // Each device the open savepoint changed, with its entry of before (nullopt: it had none).
  std::vector<std::pair<std::string, std::optional<Entry>>> before_;
  // States no entry holds any more, reused by the next save() of the transaction.
  std::vector<std::unique_ptr<EdgeDeviceState>> spare_;
};

}  // namespace dsekp::edge
