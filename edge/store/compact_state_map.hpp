// The edge's in-memory working set: dev_id -> (encoded device state, generation).
//
// Why encoded: an EdgeDeviceState is 3448 bytes (8 session slots of 240 bytes, a 32-entry INIT
// replay cache, the pending session), almost all of it empty for a device with one session. Its
// device_state_codec encoding is about 170 bytes, and decoding it costs well under a
// microsecond, against the tens of microseconds an SQLite lookup and commit cost per frame.
//
// Why not std::unordered_map: each entry is one heap block holding its header, key and blob,
// and the table is a flat array of pointers with linear probing, which saves the per-node
// allocation, pointers and cached hash of a node-based map (about 40-50 bytes per device).
// Blocks hold keys and are wiped before they are freed. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "dsekp/bytes.hpp"

namespace dsekp::edge {

class CompactStateMap {
 public:
  struct Entry {
    ByteView blob;  // valid until the next put, erase or clear
    std::uint64_t generation = 0;
  };

  /// Largest blob put() accepts (every valid encoding is far smaller).
  static constexpr std::size_t kMaxBlobSize = 0xFFFF;

  CompactStateMap() = default;
  CompactStateMap(const CompactStateMap&) = delete;
  CompactStateMap& operator=(const CompactStateMap&) = delete;
  ~CompactStateMap() { clear(); }

  /// Inserts or replaces the entry of `dev_id` (1..255 bytes). False if a size is out of range.
  bool put(std::string_view dev_id, ByteView blob, std::uint64_t generation);
  [[nodiscard]] std::optional<Entry> find(std::string_view dev_id) const noexcept;
  /// True if there was an entry.
  bool erase(std::string_view dev_id) noexcept;
  void clear() noexcept;

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t slot_count() const noexcept { return slots_.size(); }

 private:
  struct Record;  // header, then the key bytes, then the blob bytes, in one allocation
  [[nodiscard]] std::size_t home(std::string_view key) const noexcept;
  [[nodiscard]] std::size_t locate(std::string_view key) const noexcept;  // slot or empty slot
  void grow();
  static Record* make_record(std::string_view key, ByteView blob, std::uint64_t generation);
  static void free_record(Record* record) noexcept;

  std::vector<Record*> slots_;  // size is 0 or a power of two
  std::size_t size_ = 0;
};

}  // namespace dsekp::edge
