// Reading what the edge's store holds of one device from outside the daemon, for `dsekp keys
// show`: the epoch of a ratcheting device's secret (PROTOCOL.md 6.6), never the secret. The store
// is found as state_reset.hpp finds it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "edge/daemon/state_reset.hpp"

namespace dsekp::edge::daemon {

/// The ratchet epoch of `dev_id`'s stored state: unset if nothing is stored for it (no SQLite
/// state database yet included) or its state does not ratchet. false with `error` if the store
/// cannot be opened or read, or the state does not decode.
[[nodiscard]] bool read_ratchet_epoch(const StateLocation& where, const std::string& dev_id,
                                      std::optional<std::uint32_t>& epoch, std::string& error);

}  // namespace dsekp::edge::daemon
