// Erases a ratcheting device's provisioned secret from the registry once the edge's stored state
// is past it (PROTOCOL.md 6.6, edge rule 1): from then on a copy of the registry no longer gives
// the device's earlier sessions, and the state holds the only copy of the device's secret.
//
// Order, per burst: the service marks a result whose saved state is past epoch 0 while the
// registry still holds epoch 0 (HandleResult::provisioned_secret_superseded); after the burst's
// commit the daemon notes the settled ones here, and at the burst's end erase_noted() makes the
// store durable (SessionStore::make_durable: a power cut can no longer take the state back to
// none) and only then overwrites the registry's copy, conditional on the credentials'
// generation (a rotation in between keeps the new secret). A store that cannot promise
// durability (Redis without appendfsync always) keeps the provisioned secrets: the reason is
// logged, and asked again a minute later. What fails is tried again at the device's next save.
//
// The registry is written through a connection of its own, so the service's credential cache
// (another connection) sees the change at its next burst. Loop thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "edge/registry/device_registry.hpp"
#include "edge/service/handle_result.hpp"
#include "edge/store/session_store.hpp"

namespace dsekp::edge::daemon {

class SecretEraser {
 public:
  SecretEraser(std::string registry_path, SessionStore& store)
      : registry_path_(std::move(registry_path)), store_(store) {}

  /// A settled (committed) result: remembered if it asks for an erasure.
  void note(const HandleResult& r);
  /// Outside a transaction, after the burst's commit: erases what was noted, if the store can
  /// make its commits durable first.
  void erase_noted(std::uint64_t now_ms);

 private:
  void warn(std::uint64_t now_ms, const std::string& what);

  std::string registry_path_;
  SessionStore& store_;
  std::unique_ptr<DeviceRegistry> registry_;    // opened at the first erasure
  std::map<std::string, std::uint64_t> noted_;  // dev_id -> credentials' generation
  std::uint64_t retry_after_ms_ = 0;            // a store that could not be made durable
  std::uint64_t warned_ms_ = 0;
  bool warned_ = false;
};

}  // namespace dsekp::edge::daemon
