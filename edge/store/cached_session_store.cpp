// Write-through working set (see cached_session_store.hpp).
#include "cached_session_store.hpp"

#include <utility>

namespace dsekp::edge {

StoreResult CachedSessionStore::load(const DevId& dev_id, EdgeDeviceState& out,
                                     std::uint64_t& generation) {
  // The newest staged write of this transaction wins over the committed working set.
  for (auto it = staged_.rbegin(); it != staged_.rend(); ++it) {
    if (it->dev_id != dev_id.str()) continue;
    out = EdgeDeviceState{};
    generation = it->generation;
    if (it->blob.empty()) return StoreResult{};
    const StateCodecError e = decode_device_state(it->blob, &dev_id, out);
    return StoreResult{e == StateCodecError::ok ? StoreStatus::ok : StoreStatus::corrupt_state, e};
  }
  if (const auto entry = cache_.find(dev_id.str())) {
    if (decode_device_state(entry->blob, &dev_id, out) == StateCodecError::ok) {
      generation = entry->generation;
      return StoreResult{};
    }
    cache_.erase(dev_id.str());  // cannot happen for bytes we encoded; re-read the store
  }
  const StoreResult r = backing_.load(dev_id, out, generation);
  if (r.ok() && generation != kAbsentGeneration && !backing_.in_transaction())
    remember(dev_id, out, generation);
  return r;
}

StoreResult CachedSessionStore::save(const DevId& dev_id, const EdgeDeviceState& state,
                                     std::uint64_t now_ms, std::uint64_t& generation) {
  const StoreResult r = backing_.save(dev_id, state, now_ms, generation);
  if (r.status == StoreStatus::generation_conflict) cache_.erase(dev_id.str());
  if (!r.ok()) return r;
  Staged staged{std::string(dev_id.str()), {}, generation};
  // The backing store has validated the state, so it encodes.
  (void)encode_device_state(state, staged.blob);
  stage_or_apply(std::move(staged));
  return r;
}

StoreResult CachedSessionStore::remove(const DevId& dev_id) {
  const StoreResult r = backing_.remove(dev_id);
  if (r.ok()) stage_or_apply(Staged{std::string(dev_id.str()), {}, kAbsentGeneration});
  return r;
}

StoreResult CachedSessionStore::begin() {
  return backing_.begin();
}

StoreResult CachedSessionStore::commit() {
  const StoreResult r = backing_.commit();
  if (r.ok()) {
    for (const Staged& s : staged_) apply(s);
  } else {
    // A generation_conflict means another writer (another edge on a shared store) holds newer
    // states than the ones this unit was built on, and a storage_failure whose reply was lost
    // may have applied the unit after all: either way the working set's copies of these devices
    // cannot be trusted, so the next load fetches them from the backing store.
    for (const Staged& s : staged_) cache_.erase(s.dev_id);
  }
  discard_staged();
  return r;
}

StoreResult CachedSessionStore::rollback() {
  discard_staged();
  return backing_.rollback();
}

StoreResult CachedSessionStore::savepoint() {
  const StoreResult r = backing_.savepoint();
  if (r.ok()) savepoint_mark_ = staged_.size();
  return r;
}

StoreResult CachedSessionStore::release_savepoint() {
  const StoreResult r = backing_.release_savepoint();
  if (!r.ok()) drop_after_mark();  // the backing store has undone them
  return r;
}

StoreResult CachedSessionStore::rollback_to_savepoint() {
  drop_after_mark();
  return backing_.rollback_to_savepoint();
}

void CachedSessionStore::drop_after_mark() noexcept {
  if (savepoint_mark_ > staged_.size()) savepoint_mark_ = staged_.size();
  for (std::size_t i = savepoint_mark_; i < staged_.size(); ++i) secure_wipe(staged_[i].blob);
  staged_.resize(savepoint_mark_);
}

void CachedSessionStore::remember(const DevId& dev_id, const EdgeDeviceState& state,
                                  std::uint64_t generation) {
  if (encode_device_state(state, scratch_) == StateCodecError::ok)
    cache_.put(dev_id.str(), scratch_, generation);
  secure_wipe(scratch_);
}

void CachedSessionStore::stage_or_apply(Staged staged) {
  if (backing_.in_transaction()) {
    staged_.push_back(std::move(staged));
    return;
  }
  apply(staged);
  secure_wipe(staged.blob);
}

void CachedSessionStore::apply(const Staged& staged) {
  if (staged.blob.empty()) {
    cache_.erase(staged.dev_id);
  } else {
    cache_.put(staged.dev_id, staged.blob, staged.generation);
  }
}

void CachedSessionStore::discard_staged() noexcept {
  for (Staged& s : staged_) secure_wipe(s.blob);
  staged_.clear();
  savepoint_mark_ = 0;
}

}  // namespace dsekp::edge
