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
      marked_ && std::none_of(before_.begin(), before_.end(), [&](const Before& b) {
        return b.session == nullptr && b.dev_id == dev_id;
      });
  // The allocations first, so that a failure leaves everything as it was.
  if (!existed || !it->second.dirty) dirty_.emplace_back(dev_id);
  if (first_in_savepoint) (void)record(dev_id);
  if (!existed) it = entries_.emplace(std::string(dev_id), Entry{}).first;
  if (first_in_savepoint && existed) {
    before_.back().entry = std::move(it->second);  // what undo() must give back
  } else {
    recycle(std::move(it->second.state));
  }
  it->second = std::move(entry);
}

StateWriteBack::Before& StateWriteBack::record(std::string_view dev_id) {
  Before& b = before_.emplace_back();
  try {
    b.dev_id.assign(dev_id);
  } catch (...) {
    before_.pop_back();
    throw;
  }
  return b;
}

void StateWriteBack::mark_checked(std::string_view dev_id,
                                  std::uint64_t credential_generation) noexcept {
  const auto it = entries_.find(dev_id);
  if (it != entries_.end() && !it->second.removed())
    it->second.checked_credential_generation = credential_generation;
}

EdgeSession* StateWriteBack::checked_session(std::string_view dev_id, std::uint16_t sessctr,
                                             std::uint64_t credential_generation) noexcept {
  const auto it = entries_.find(dev_id);
  if (it == entries_.end() || it->second.removed() ||
      it->second.checked_credential_generation != credential_generation)
    return nullptr;
  EdgeDeviceState& state = *it->second.state;
  for (std::uint32_t i = 0; i < state.established_count && i < state.established.size(); ++i)
    if (state.established[i].sessctr == sessctr) return &state.established[i];
  return nullptr;
}

void StateWriteBack::window_moved(std::string_view dev_id, EdgeSession& session,
                                  const ReplayWindow& window_before,
                                  std::uint64_t last_seen_before) {
  const auto it = entries_.find(dev_id);
  if (it != entries_.end() && !it->second.dirty) {
    // Written at the commit like a save (an undone move leaves it dirty: writing the same
    // state again is harmless).
    dirty_.emplace_back(dev_id);
    it->second.dirty = true;
    it->second.generation = it->second.stored_generation + 1;
  }
  if (!marked_) return;  // the transaction's own rollback drops the whole entry
  Before& b = record(dev_id);
  b.session = &session;
  b.window = window_before;
  b.last_seen_ms = last_seen_before;
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
  for (Before& b : before_)
    if (b.entry) recycle(std::move(b.entry->state));
  before_.clear();
  marked_ = false;
}

void StateWriteBack::undo() {
  for (auto it = before_.rbegin(); it != before_.rend(); ++it) {
    if (it->session != nullptr) {
      // The changes after it are undone already, so the session is the one it moved.
      it->session->uplink_window = it->window;
      it->session->last_seen_ms = it->last_seen_ms;
      continue;
    }
    const auto entry = entries_.find(it->dev_id);
    if (entry == entries_.end()) continue;  // cannot happen: a change made the entry
    recycle(std::move(entry->second.state));
    if (it->entry) {
      entry->second = std::move(*it->entry);
    } else {
      entries_.erase(entry);
    }
  }
  before_.clear();
  marked_ = false;
}

void StateWriteBack::committed(std::size_t keep_at_most) noexcept {
  before_.clear();
  marked_ = false;
  spare_.clear();
  if (entries_.size() > keep_at_most) return clear();
  // Only the entries the transaction made dirty can differ from what the database now holds.
  for (const std::string& dev_id : dirty_) {
    const auto it = entries_.find(dev_id);
    if (it == entries_.end()) continue;
    Entry& e = it->second;
    if (e.removed()) {
      entries_.erase(it);
      continue;
    }
    e.stored_generation = e.generation;
    e.dirty = false;
  }
  dirty_.clear();
}

void StateWriteBack::clear() noexcept {
  dirty_.clear();
  before_.clear();
  marked_ = false;
  entries_.clear();
  spare_.clear();  // the states' SecretBytes wipe the keys as they are freed
}

void StateWriteBack::for_each_dirty(
    const std::function<void(const std::string&, const Entry&)>& f) {
  std::sort(dirty_.begin(), dirty_.end());
  dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
  for (const std::string& dev_id : dirty_) {
    const auto it = entries_.find(dev_id);
    if (it != entries_.end() && it->second.dirty) f(it->first, it->second);
  }
}

}  // namespace dsekp::edge
