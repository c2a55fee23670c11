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
// The states hold session keys: their SecretBytes wipe them when an entry is dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dsekp/edge_session.hpp"

namespace dsekp::edge {

class StateWriteBack {
 public:
  struct Entry {
    EdgeDeviceState state;  // (default when removed)
    bool removed = false;
    std::uint64_t stored_generation = 0;  // the database's when first touched (0: no row)
    std::uint64_t generation = 0;         // as the transaction sees it (0: absent)
    std::uint64_t updated_ms = 0;
  };

  StateWriteBack() = default;
  StateWriteBack(const StateWriteBack&) = delete;
  StateWriteBack& operator=(const StateWriteBack&) = delete;
  ~StateWriteBack() { clear(); }

  /// The device's entry in the open transaction, or null if it has none.
  [[nodiscard]] const Entry* find(std::string_view dev_id) const;
  /// Replaces (or adds) the device's entry.
  void put(std::string_view dev_id, Entry entry);

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
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };

  std::unordered_map<std::string, Entry, Hash, std::equal_to<>> entries_;
  bool marked_ = false;
  // Each device the open savepoint changed, with its entry of before (nullopt: it had none).
  std::vector<std::pair<std::string, std::optional<Entry>>> before_;
};

}  // namespace dsekp::edge
