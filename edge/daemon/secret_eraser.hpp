// Erases a ratcheting device's provisioned secret from the registry once the edge's stored state
// is past it (PROTOCOL.md 6.6, edge rule 1): from then on a copy of the registry no longer gives
// the device's earlier sessions, and the state holds the only copy of the device's secret.
//
// Order, per burst: the service marks a result whose saved state is past epoch 0 while the
// registry still holds epoch 0 (HandleResult::provisioned_secret_superseded); after the burst's
// commit the daemon notes the settled ones here, and at the burst's end erase_noted() makes the
// store durable (SessionStore::make_durable: a power cut can no longer take the state back to
// none), checks that the stored state is still past epoch 0 under the same credentials (an
// operator's `keys reset-state` may have removed it meanwhile), and only then overwrites the
// registry's copy, conditional on the credentials' generation (a rotation in between keeps the
// new secret), and checkpoints the registry's write-ahead log, again at later bursts until it
// completes. A store that cannot promise durability (Redis without appendfsync always) keeps
// the provisioned secrets: the reason is logged, and asked again a minute later.
//
// Every committed ratchet step also makes the store durable at the burst's end (one sync per
// session of a ratcheting device), so that a power cut cannot take a state back past the
// look-ahead. What fails is kept and tried again later (at most kMaxNoted devices).
//
// The registry is written through a connection of its own, without waiting for locks, so the
// service's credential cache (another connection) sees the change at its next burst and a
// `dsekp keys` writer never stalls the loop. Loop thread only.
#pragma once

#include <cstddef>
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
  static constexpr std::size_t kMaxNoted = 65'536;

  SecretEraser(std::string registry_path, SessionStore& store)
      : registry_path_(std::move(registry_path)), store_(store) {}

  /// A settled (committed) result: remembered if it asks for an erasure or stepped a secret.
  void note(const HandleResult& r);
  /// Outside a transaction, after the burst's commit: syncs the store if a step was committed,
  /// then erases what was noted.
  void erase_noted(std::uint64_t now_ms);

 private:
  [[nodiscard]] bool open_registry(std::uint64_t now_ms);
  [[nodiscard]] bool state_is_past_provisioning(const std::string& dev_id);
  void warn(std::uint64_t now_ms, const std::string& what);

  std::string registry_path_;
  SessionStore& store_;
  std::unique_ptr<DeviceRegistry> registry_;    // opened at the first erasure
  std::map<std::string, std::uint64_t> noted_;  // dev_id -> credentials' generation
  bool step_committed_ = false;                 // a ratchet step since the last sync
  bool checkpoint_owed_ = false;                // an erasure whose WAL images may remain
  std::uint64_t retry_after_ms_ = 0;            // after a failure
  std::uint64_t warned_ms_ = 0;
  bool warned_ = false;
};

}  // namespace dsekp::edge::daemon
