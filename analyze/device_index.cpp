// dev_id numbering (see device_index.hpp).
#include "device_index.hpp"

namespace dsekp::analyze {

std::optional<std::uint16_t> DeviceIndex::find_or_add(std::string_view dev_id) {
  if (last_ < names_.size() && names_[last_] == dev_id) return static_cast<std::uint16_t>(last_);
  if (const auto it = map_.find(dev_id); it != map_.end()) {
    last_ = it->second;
    return it->second;
  }
  if (names_.size() >= kMaxDevices) return std::nullopt;
  const auto index = static_cast<std::uint16_t>(names_.size());
  names_.emplace_back(dev_id);
  map_.emplace(names_.back(), index);
  last_ = index;
  return index;
}

}  // namespace dsekp::analyze
