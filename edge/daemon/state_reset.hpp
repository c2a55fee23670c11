// Removing one device's stored session state from outside the daemon: what `dsekp keys
// reset-state` (a quarantined device, EdgeReason::corrupt_state) and `dsekp keys remove` (a
// removed device's sessions and keys must not outlive it) do to the store the edge uses.
//
// The same store the daemon would open: the SQLite state database (default `<registry>.state`),
// or the shared Redis store of `--store redis://...`. State and credential record go in one
// transaction. The daemon never writes a quarantined device (it refuses it before any save),
// and a removed device is refused as unknown_device, so neither races with the running edge;
// the device's next INIT starts from nothing.
#pragma once

#include <string>

namespace dsekp::edge::daemon {

struct StateLocation {
  std::string registry_db;     // --db
  std::string state_db;        // --state-db; empty: registry_db + ".state"
  std::string store;           // --store; empty or "sqlite": the state database
  std::string store_password;  // the Redis user's password (DSEKP_REDIS_PASSWORD); empty: none
};

/// The SQLite state database `where` names (`--state-db`, default `<registry>.state`), or "" if
/// the store is Redis.
[[nodiscard]] std::string sqlite_state_path(const StateLocation& where);

/// Removes `dev_id`'s state and credential record. `found` tells whether there was a state.
/// false with `error` if the store cannot be opened or written (a missing SQLite state database
/// is not an error: nothing is stored there).
[[nodiscard]] bool reset_device_state(const StateLocation& where, const std::string& dev_id,
                                      bool& found, std::string& error);

}  // namespace dsekp::edge::daemon
