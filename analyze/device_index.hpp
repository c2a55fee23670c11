// Numbers the dev_id strings of one log file 0, 1, 2, ... so that rows keep a 16-bit device index
// instead of a string (docs/PERFORMANCE.md: memory stays at a few numbers per row).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dsekp::analyze {

class DeviceIndex {
 public:
  static constexpr std::size_t kMaxDevices = 65536;  // the index is 16 bits of a reliability key

  /// The index of `dev_id`, adding it if new; empty once kMaxDevices names are taken.
  std::optional<std::uint16_t> find_or_add(std::string_view dev_id);

  const std::vector<std::string>& names() const { return names_; }
  std::vector<std::string> take_names() { return std::move(names_); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint16_t, Hash, std::equal_to<>> map_;
  std::vector<std::string> names_;
  // Logs usually repeat the same device in runs of rows; the cache skips the hash then.
  std::size_t last_ = kMaxDevices;
};

}  // namespace dsekp::analyze
