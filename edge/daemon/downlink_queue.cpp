// The bounded queue of held downlink requests (see downlink_queue.hpp).
#include "edge/daemon/downlink_queue.hpp"

#include <utility>

namespace dsekp::edge::daemon {

bool DownlinkQueue::push(QueuedDownlink d) {
  if (size_ >= total_) return false;
  std::deque<QueuedDownlink>& held = by_device_[d.dev_id];
  if (held.size() >= per_device_) {
    if (held.empty()) by_device_.erase(d.dev_id);
    return false;
  }
  held.push_back(std::move(d));
  ++size_;
  return true;
}

std::deque<QueuedDownlink> DownlinkQueue::take(const std::string& dev_id) {
  const auto it = by_device_.find(dev_id);
  if (it == by_device_.end()) return {};
  std::deque<QueuedDownlink> held = std::move(it->second);
  by_device_.erase(it);
  size_ -= held.size();
  return held;
}

void DownlinkQueue::put_back(const std::string& dev_id, std::deque<QueuedDownlink> held) {
  if (held.empty()) return;
  std::deque<QueuedDownlink>& now = by_device_[dev_id];
  size_ += held.size();
  for (QueuedDownlink& d : now) held.push_back(std::move(d));
  now = std::move(held);
}

std::vector<QueuedDownlink> DownlinkQueue::expire(std::uint64_t now_ms) {
  std::vector<QueuedDownlink> out;
  for (auto it = by_device_.begin(); it != by_device_.end();) {
    std::deque<QueuedDownlink>& held = it->second;
    for (auto d = held.begin(); d != held.end();) {
      if (d->expires_ms > now_ms) {
        ++d;
        continue;
      }
      out.push_back(std::move(*d));
      d = held.erase(d);
      --size_;
    }
    it = held.empty() ? by_device_.erase(it) : std::next(it);
  }
  return out;
}

}  // namespace dsekp::edge::daemon
