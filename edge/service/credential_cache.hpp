// The registry's answers, kept while the registry is unchanged: a device's credentials are read
// from SQLite once, then answered from memory for as long as the registry's change mark (its
// generation, bumped by every add, rotate and remove, and SQLite's data version of the file,
// moved by any commit) stays what it was. The mark is read once at the start of each burst: one
// single-row read instead of one lookup per device per burst.
//
// Why checked per burst: the registry is changed by other processes (`dsekp keys rotate`,
// `remove`, the control API), and a change must take effect promptly. A burst is the messages
// already waiting when it began, at most --batch-max of them (256 by default) and, unless
// --batch-time-ms is 0, at most that long (10 ms by default), and it ends with its commit; so a
// change committed during one takes effect at the next, as if it had been committed that much
// later: up to --batch-max messages of a device may still be accepted under credentials just
// rotated or removed. A rotation can never mix: every message of a burst sees one generation
// of a device's credentials. Outside a burst every lookup reads the registry.
//
// Holds secrets (copies of DEV_SECRET and the PSK key, as SQLite's page cache of the registry
// does): SecretBytes wipes them when an entry is dropped. At most kMaxEntries are kept; past
// that the whole cache is dropped and refilled, so memory is bounded whatever the fleet size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "edge/registry/device_registry.hpp"
#include "edge/string_map.hpp"

namespace dsekp::edge {

class CredentialCache {
 public:
  static constexpr std::size_t kMaxEntries = 65'536;

  explicit CredentialCache(DeviceRegistry& registry) noexcept : registry_(registry) {}

  /// Starts a burst: answers from memory until end() if the registry's change mark is the one
  /// the kept answers were read at; otherwise (or if it cannot be read) forgets them first.
  void begin() {
    RegistryChangeMark now;
    if (!registry_.change_mark(now).ok()) {
      forget();  // the registry cannot say whether it changed: ask it every time
      return;
    }
    if (mark_ != now) {
      forget();
      mark_ = now;
    }
    active_ = true;
  }
  /// Ends the burst; the answers are kept for the next one.
  void end() noexcept { active_ = false; }

  /// DeviceRegistry::find, answered from memory inside a burst when an earlier lookup at the
  /// same change mark found `dev_id` (not_found and failures are not kept: they are
  /// asked again).
  RegistryStatus find(std::string_view dev_id, DeviceCredentials& out) {
    if (active_) {
      if (const auto it = found_.find(dev_id); it != found_.end()) {
        copy(it->second, out);
        return RegistryStatus{};
      }
    }
    RegistryStatus s = registry_.find(dev_id, out);
    if (active_ && s.ok()) {
      if (found_.size() >= kMaxEntries) found_.clear();
      copy(out, found_[std::string(dev_id)]);
    }
    return s;
  }

  /// find(), for a caller that needs only the credentials' generation: no copy of the secrets.
  RegistryStatus generation(std::string_view dev_id, std::uint64_t& out) {
    if (active_) {
      if (const auto it = found_.find(dev_id); it != found_.end()) {
        out = it->second.generation;
        return RegistryStatus{};
      }
    }
    DeviceCredentials credentials;
    RegistryStatus s = find(dev_id, credentials);
    if (s.ok()) out = credentials.generation;
    return s;
  }

 private:
  void forget() noexcept {
    found_.clear();
    mark_.reset();
  }

  static void copy(const DeviceCredentials& from, DeviceCredentials& to) {
    to.dev_id = from.dev_id;
    to.dev_secret = from.dev_secret.clone();
    to.psk_key = from.psk_key.clone();
    to.generation = from.generation;
    to.ratchet = from.ratchet;
    to.secret_erased = from.secret_erased;
  }

  DeviceRegistry& registry_;
  bool active_ = false;
  std::optional<RegistryChangeMark> mark_;  // the registry's, when found_ was filled
  StringMap<DeviceCredentials> found_;
};

}  // namespace dsekp::edge
