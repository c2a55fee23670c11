// The registry's answers for one burst of messages: a device's credentials are read from the
// registry once per burst, not once per message (and not three times on a cache miss of the
// Redis store's uplink path). Outside a burst every lookup reads the registry.
//
// Why a burst and no longer: the registry is changed by other processes (`dsekp keys rotate`,
// `remove`, the control API), and a change must take effect promptly. A burst is the messages
// already waiting when it began, at most --batch-max of them (256 by default) and, unless
// --batch-time-ms is 0, at most that long (10 ms by default), and it ends with its commit; so a
// change committed during one takes effect at the next, as if it had been committed that much
// later: up to --batch-max messages of a device may still be accepted under credentials just
// rotated or removed. A rotation can never mix: every message of a burst sees one generation
// of a device's credentials.
//
// Holds secrets (copies of DEV_SECRET and the PSK key); SecretBytes wipes them on clear().
#pragma once

#include <string>
#include <string_view>

#include "edge/registry/device_registry.hpp"
#include "edge/string_map.hpp"

namespace dsekp::edge {

class BurstCredentials {
 public:
  explicit BurstCredentials(DeviceRegistry& registry) noexcept : registry_(registry) {}

  /// Answers from the registry until end(); lookups before begin() always read it.
  void begin() { active_ = true; }
  /// Forgets every answer of the burst.
  void end() noexcept {
    active_ = false;
    found_.clear();
  }

  /// DeviceRegistry::find, answered from the burst's earlier lookup of `dev_id` when there was
  /// one that found it (not_found and failures are not kept: they are asked again).
  RegistryStatus find(std::string_view dev_id, DeviceCredentials& out) {
    if (active_) {
      if (const auto it = found_.find(dev_id); it != found_.end()) {
        copy(it->second, out);
        return RegistryStatus{};
      }
    }
    RegistryStatus s = registry_.find(dev_id, out);
    if (active_ && s.ok()) copy(out, found_[std::string(dev_id)]);
    return s;
  }

 private:
  static void copy(const DeviceCredentials& from, DeviceCredentials& to) {
    to.dev_id = from.dev_id;
    to.dev_secret = from.dev_secret.clone();
    to.psk_key = from.psk_key.clone();
    to.generation = from.generation;
  }

  DeviceRegistry& registry_;
  bool active_ = false;
  StringMap<DeviceCredentials> found_;
};

}  // namespace dsekp::edge
