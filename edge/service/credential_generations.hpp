// Which credentials a device's stored session state was built with.
//
// Why: the registry gives every device's credentials a generation that changes when its
// DEV_SECRET is rotated or the device is removed and added again (device_registry.hpp, "Live
// changes"). Sessions derived from the old secret must not be used again, and the core's
// EdgeDeviceState has no field for this, nor does the session store's row (its own `generation`
// counts saves, for optimistic concurrency). So the edge records the registry generation next to
// each stored state, in the same transaction as the save that (re)creates the state (an accepted
// INIT), and compares it with the registry's on every message: a state recorded under another
// generation, or with none recorded, is stale.
//
// Implementations: SqliteCredentialGenerations (sqlite_credential_generations.hpp).
#pragma once

#include <cstdint>
#include <optional>

#include "edge/store/session_store.hpp"

namespace dsekp::edge {

class CredentialGenerations {
 public:
  virtual ~CredentialGenerations() = default;

  /// The generation recorded for `dev_id`, or nullopt if none is.
  virtual StoreResult load(const DevId& dev_id, std::optional<std::uint64_t>& generation) = 0;
  /// Records `generation` for `dev_id`. Only inside the session store's open transaction
  /// (transaction_misuse otherwise), so that it is stored together with the state.
  virtual StoreResult record(const DevId& dev_id, std::uint64_t generation) = 0;
  /// Forgets `dev_id` (absent is ok). Same transaction rule as record().
  virtual StoreResult remove(const DevId& dev_id) = 0;
};

}  // namespace dsekp::edge
