// StateWriteBack (see state_write_back.hpp).
#include "state_write_back.hpp"

#include <algorithm>

namespace dsekp::edge {

const StateWriteBack::Entry* StateWriteBack::find(std::string_view dev_id) const {
  const auto it = entries_.find(dev_id);
  return it == entries_.end() ? nullptr : &it->second;
}

void StateWriteBack::put(std::string_view dev_id, Entry entry) {
  auto it = entries_.find(dev_id);
  if (marked_ && std::none_of(before_.begin(), before_.end(),
                              [&](const auto& b) { return b.first == dev_id; })) {
    // The first change of this device in the savepoint: what undo() must give back. Its slot
    // is made first, so that an allocation failure leaves the entry as it was.
    before_.emplace_back(std::string(dev_id), std::nullopt);
    if (it != entries_.end()) before_.back().second = std::move(it->second);
  }
  if (it == entries_.end()) {
    entries_.emplace(std::string(dev_id), std::move(entry));
  } else {
    it->second = std::move(entry);
  }
}

void StateWriteBack::mark() {
  keep();
  marked_ = true;
}

void StateWriteBack::keep() noexcept {
  before_.clear();
  marked_ = false;
}

void StateWriteBack::undo() {
  for (auto it = before_.rbegin(); it != before_.rend(); ++it) {
    auto entry = entries_.find(it->first);
    if (entry != entries_.end()) {
      if (it->second) {
        entry->second = std::move(*it->second);
      } else {
        entries_.erase(entry);
      }
    } else if (it->second) {
      entries_.emplace(it->first, std::move(*it->second));
    }
  }
  before_.clear();
  marked_ = false;
}

void StateWriteBack::clear() noexcept {
  keep();
  entries_.clear();
}

void StateWriteBack::for_each(
    const std::function<void(const std::string&, const Entry&)>& f) const {
  for (const auto& [dev_id, entry] : entries_) f(dev_id, entry);
}

}  // namespace dsekp::edge
