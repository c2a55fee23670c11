// Open-addressing map of encoded device states (see compact_state_map.hpp).
#include "compact_state_map.hpp"

#include <algorithm>
#include <functional>
#include <new>

namespace dsekp::edge {

struct CompactStateMap::Record {
  std::uint64_t generation;
  std::uint16_t blob_size;
  std::uint8_t key_size;

  std::uint8_t* bytes() noexcept { return reinterpret_cast<std::uint8_t*>(this + 1); }
  const std::uint8_t* bytes() const noexcept {
    return reinterpret_cast<const std::uint8_t*>(this + 1);
  }
  std::string_view key() const noexcept {
    return {reinterpret_cast<const char*>(bytes()), key_size};
  }
  MutableByteView blob() noexcept { return {bytes() + key_size, blob_size}; }
  ByteView blob() const noexcept { return {bytes() + key_size, blob_size}; }
  std::size_t allocation_size() const noexcept { return sizeof(Record) + key_size + blob_size; }
};

namespace {
// Grow when more than 4 of 5 slots are used: linear probing stays short (about 3 probes for a
// hit) while the table costs 10-20 bytes per device.
constexpr std::size_t kLoadNumerator = 4;
constexpr std::size_t kLoadDenominator = 5;
constexpr std::size_t kMinSlots = 16;
}  // namespace

CompactStateMap::Record* CompactStateMap::make_record(std::string_view key, ByteView blob,
                                                      std::uint64_t generation) {
  void* block = ::operator new(sizeof(Record) + key.size() + blob.size());
  auto* record = new (block) Record{generation, static_cast<std::uint16_t>(blob.size()),
                                    static_cast<std::uint8_t>(key.size())};
  std::copy(key.begin(), key.end(), record->bytes());
  std::copy(blob.begin(), blob.end(), record->blob().begin());
  return record;
}

void CompactStateMap::free_record(Record* record) noexcept {
  secure_wipe(MutableByteView(reinterpret_cast<std::uint8_t*>(record), record->allocation_size()));
  ::operator delete(record);
}

std::size_t CompactStateMap::home(std::string_view key) const noexcept {
  return std::hash<std::string_view>{}(key) & (slots_.size() - 1);
}

std::size_t CompactStateMap::locate(std::string_view key) const noexcept {
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = home(key);
  while (slots_[i] != nullptr && slots_[i]->key() != key) i = (i + 1) & mask;
  return i;
}

void CompactStateMap::grow() {
  std::vector<Record*> old = std::move(slots_);
  slots_.assign(old.empty() ? kMinSlots : old.size() * 2, nullptr);
  for (Record* record : old) {
    if (record != nullptr) slots_[locate(record->key())] = record;
  }
}

bool CompactStateMap::put(std::string_view dev_id, ByteView blob, std::uint64_t generation) {
  if (dev_id.empty() || dev_id.size() > 0xFF || blob.size() > kMaxBlobSize) return false;
  if ((size_ + 1) * kLoadDenominator > slots_.size() * kLoadNumerator) grow();
  const std::size_t i = locate(dev_id);
  Record* existing = slots_[i];
  if (existing != nullptr && existing->blob_size == blob.size()) {
    // The common case (a frame moved the replay window): same size, overwrite in place.
    std::copy(blob.begin(), blob.end(), existing->blob().begin());
    existing->generation = generation;
    return true;
  }
  Record* record = make_record(dev_id, blob, generation);
  if (existing != nullptr) {
    free_record(existing);
  } else {
    ++size_;
  }
  slots_[i] = record;
  return true;
}

std::optional<CompactStateMap::Entry> CompactStateMap::find(
    std::string_view dev_id) const noexcept {
  if (slots_.empty()) return std::nullopt;
  const Record* record = slots_[locate(dev_id)];
  if (record == nullptr) return std::nullopt;
  return Entry{record->blob(), record->generation};
}

bool CompactStateMap::erase(std::string_view dev_id) noexcept {
  if (slots_.empty()) return false;
  std::size_t hole = locate(dev_id);
  if (slots_[hole] == nullptr) return false;
  free_record(slots_[hole]);
  slots_[hole] = nullptr;
  --size_;
  // Backward-shift deletion: move later members of the probe run into the hole when their home
  // slot does not lie (cyclically) between the hole and where they are, so that every lookup
  // still finds them without tombstones.
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t j = (hole + 1) & mask; slots_[j] != nullptr; j = (j + 1) & mask) {
    const std::size_t k = home(slots_[j]->key());
    const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    slots_[j] = nullptr;
    hole = j;
  }
  return true;
}

void CompactStateMap::clear() noexcept {
  for (Record*& record : slots_) {
    if (record != nullptr) free_record(record);
    record = nullptr;
  }
  size_ = 0;
}

}  // namespace dsekp::edge
