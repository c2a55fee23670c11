// Last-seen times and the silent-device counts (see device_activity.hpp).
#include "edge/daemon/device_activity.hpp"

#include <utility>
#include <vector>

namespace dsekp::edge {

DeviceActivity::DeviceActivity(std::function<bool(const std::string&)> registered)
    : registered_(std::move(registered)) {}

void DeviceActivity::seen(std::string_view dev_id, std::uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (const auto it = last_seen_ms_.find(dev_id); it != last_seen_ms_.end())
    it->second = now_ms;
  else
    last_seen_ms_.emplace(std::string(dev_id), now_ms);
}

DeviceActivity::Counts DeviceActivity::counts(std::uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> removed;
  Counts counts;
  for (const auto& [dev_id, last] : last_seen_ms_) {
    const std::uint64_t quiet = now_ms > last ? now_ms - last : 0;
    if (quiet > kSilenceThresholds.front().ms && !registered_(dev_id)) {
      removed.push_back(dev_id);
      continue;
    }
    ++counts.seen;
    for (std::size_t i = 0; i < kSilenceThresholds.size(); ++i)
      if (quiet > kSilenceThresholds[i].ms) ++counts.silent[i];
  }
  for (const std::string& dev_id : removed) last_seen_ms_.erase(dev_id);
  return counts;
}

}  // namespace dsekp::edge
