// StateWriteBack (see state_write_back.hpp).
#include "state_write_back.hpp"

#include <algorithm>

#include "device_state_copy.hpp"

namespace dsekp::edge {

const StateWriteBack::Entry* StateWriteBack::find(std::string_view dev_id) const {
  const auto it = entries_.find(dev_id);
  return it == entries_.end() ? nullptr : &it->second;
}

void StateWriteBack::save(std::string_view dev_id, const EdgeDeviceState& state,
                          std::uint64_t stored_generation, std::uint64_t generation,
                          std::uint64_t updated_ms) {
  Entry entry;
  if (spare_.empty()) {
    entry.state = std::make_unique<EdgeDeviceState>();
  } else {
    entry.state = std::move(spare_.back());
    spare_.pop_back();
  }
  copy_device_state(state, *entry.state);
  entry.stored_generation = stored_generation;
  entry.generation = generation;
  entry.updated_ms = updated_ms;
  put(dev_id, std::move(entry));
}

void StateWriteBack::remove(std::string_view dev_id, std::uint64_t stored_generation) {
  Entry entry;
  entry.stored_generation = stored_generation;
  put(dev_id, std::move(entry));
}

void StateWriteBack::put(std::string_view dev_id, Entry entry) {
  auto it = entries_.find(dev_id);
  const bool existed = it != entries_.end();
  const bool first_in_savepoint =
      marked_ && std::none_of(before_.begin(), before_.end(),
                              [&](const auto& b) { return b.first == dev_id; });
  // The allocations first, so that a failure leaves everything as it was.
  if (first_in_savepoint) before_.emplace_back(std::string(dev_id), std::nullopt);
  if (!existed) it = entries_.emplace(std::string(dev_id), Entry{}).first;
  if (first_in_savepoint && existed) {
    before_.back().second = std::move(it->second);  // what undo() must give back
  } else {
    recycle(std::move(it->second.state));
  }
  it->second = std::move(entry);
}

void StateWriteBack::recycle(std::unique_ptr<EdgeDeviceState> state) noexcept {
  if (state == nullptr) return;
  try {
    spare_.push_back(std::move(state));
  } catch (...) {
    // Out of memory: the state is freed (and its keys wiped) instead of reused.
  }
}

void StateWriteBack::mark() {
  keep();
  marked_ = true;
}

void StateWriteBack::keep() noexcept {
  for (auto& [dev_id, previous] : before_)
    if (previous) recycle(std::move(previous->state));
  before_.clear();
  marked_ = false;
}

void StateWriteBack::undo() {
  for (auto it = before_.rbegin(); it != before_.rend(); ++it) {
    const auto entry = entries_.find(it->first);
    if (entry == entries_.end()) continue;  // cannot happen: a change made the entry
    recycle(std::move(entry->second.state));
    if (it->second) {
      entry->second = std::move(*it->second);
    } else {
      entries_.erase(entry);
    }
  }
  before_.clear();
  marked_ = false;
}

void StateWriteBack::clear() noexcept {
  before_.clear();
  marked_ = false;
  entries_.clear();
  spare_.clear();  // the states' SecretBytes wipe the keys as they are freed
}

void StateWriteBack::for_each(
    const std::function<void(const std::string&, const Entry&)>& f) const {
  for (const auto& [dev_id, entry] : entries_) f(dev_id, entry);
}

}  // namespace dsekp::edge
