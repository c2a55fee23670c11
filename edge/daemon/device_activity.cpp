// Last-seen times, the silent-device counts and availability (see device_activity.hpp).
#include "edge/daemon/device_activity.hpp"

#include <utility>

#include "edge/registry/republish_topics.hpp"

namespace dsekp::edge {

DeviceActivity::DeviceActivity(std::function<bool(const std::string&)> registered)
    : registered_(std::move(registered)) {}

void DeviceActivity::publish_availability(std::uint64_t offline_after_ms, AvailabilityFn publish) {
  std::lock_guard lock(mutex_);
  offline_after_ms_ = offline_after_ms;
  publish_ = std::move(publish);
}

void DeviceActivity::expect(const std::vector<std::string>& dev_ids, std::uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (offline_after_ms_ == 0) return;
  for (const std::string& dev_id : dev_ids) devices_.try_emplace(dev_id, Device{now_ms});
}

void DeviceActivity::seen(std::string_view dev_id, std::uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  auto it = devices_.find(dev_id);
  if (it == devices_.end()) it = devices_.emplace(std::string(dev_id), Device{}).first;
  Device& d = it->second;
  d.last_ms = now_ms;
  d.seen = true;
  if (offline_after_ms_ > 0 && d.availability != Availability::online) {
    d.availability = Availability::online;
    publish_(it->first, kAvailabilityOnline);
  }
}

bool DeviceActivity::online(std::string_view dev_id, std::uint64_t now_ms,
                            std::uint64_t within_ms) {
  std::lock_guard lock(mutex_);
  const auto it = devices_.find(dev_id);
  return it != devices_.end() && it->second.seen && now_ms <= it->second.last_ms + within_ms;
}

void DeviceActivity::sweep(std::uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (offline_after_ms_ == 0) return;
  for (auto it = devices_.begin(); it != devices_.end();) {
    Device& d = it->second;
    const std::uint64_t quiet = now_ms > d.last_ms ? now_ms - d.last_ms : 0;
    if (d.availability == Availability::offline || quiet <= offline_after_ms_) {
      ++it;
      continue;
    }
    if (!registered_(it->first)) {
      it = forget(it);
      continue;
    }
    d.availability = Availability::offline;
    publish_(it->first, kAvailabilityOffline);
    ++it;
  }
}

DeviceActivity::Counts DeviceActivity::counts(std::uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  Counts counts;
  for (auto it = devices_.begin(); it != devices_.end();) {
    const Device& d = it->second;
    const std::uint64_t quiet = now_ms > d.last_ms ? now_ms - d.last_ms : 0;
    if (!d.seen) {
      ++it;
      continue;
    }
    if (quiet > kSilenceThresholds.front().ms && !registered_(it->first)) {
      it = forget(it);
      continue;
    }
    ++counts.seen;
    for (std::size_t i = 0; i < kSilenceThresholds.size(); ++i)
      if (quiet > kSilenceThresholds[i].ms) ++counts.silent[i];
    ++it;
  }
  return counts;
}

DeviceActivity::Map::iterator DeviceActivity::forget(Map::iterator it) {
  if (offline_after_ms_ > 0 && it->second.availability != Availability::unknown)
    publish_(it->first, "");
  return devices_.erase(it);
}

}  // namespace dsekp::edge
