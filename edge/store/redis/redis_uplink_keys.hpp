// The uplink keys and windows of devices' established sessions, kept in an edge's memory for the
// Redis store's fast path (edge/store/uplink_session_cache.hpp): a DATA frame under a cached
// session is opened without loading the device's hash. Filled by the store's loads and saves,
// keyed by the device's Redis key, each device with the registry credential generation it was
// cached under (a rotated device misses). Only the uplink half of each session is copied: the
// downlink keys never outlive a handling. Bounded: when full, an arbitrary device is dropped for
// a new one (it is loaded again at its next frame). About 250 bytes per session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "dsekp/edge_session.hpp"

namespace dsekp::edge::redis {

class UplinkKeys {
 public:
  struct Entry {
    EdgeSession session;  // uplink keys and window only
    std::string tag;      // the session's tag (redis_window_field.hpp)
  };

  /// `capacity`: devices kept at most; 0 keeps none.
  explicit UplinkKeys(std::size_t capacity) : capacity_(capacity) {}

  [[nodiscard]] bool enabled() const noexcept { return capacity_ > 0; }
  /// Replaces what is kept of `key` by `state`'s established sessions (`tags`: theirs, in
  /// order); a state without one drops the device.
  void put(const std::string& key, const EdgeDeviceState& state,
           const std::vector<std::string>& tags, std::uint64_t credential_generation);
  /// The kept session `sessctr` of `key`, if kept under `credential_generation` and tagged.
  [[nodiscard]] Entry* find(const std::string& key, std::uint16_t sessctr,
                            std::uint64_t credential_generation) noexcept;
  /// The entry whose session is `session` (an address find() returned), or null.
  [[nodiscard]] const Entry* entry_of(const std::string& key,
                                      const EdgeSession& session) const noexcept;
  /// Puts a session's window back to `window` (a failed commit: behind Redis, never ahead).
  void put_back_window(const std::string& key, std::uint16_t sessctr, const std::string& tag,
                       const ReplayWindow& window) noexcept;
  void erase(const std::string& key) noexcept { devices_.erase(key); }
  void clear() noexcept { devices_.clear(); }
  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }

 private:
  struct Device {
    std::uint64_t credential_generation = 0;
    std::vector<Entry> sessions;
  };
  std::unordered_map<std::string, Device> devices_;  // by Redis key
  std::size_t capacity_;
};

}  // namespace dsekp::edge::redis
