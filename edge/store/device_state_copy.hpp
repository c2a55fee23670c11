// Explicit copies of an EdgeDeviceState, which is move-only so that its keys are never
// duplicated by accident: the write-back (state_write_back.hpp) keeps the newest state of a
// device in a transaction and hands each load a copy, so that a message that fails leaves it
// untouched.
#pragma once

#include "dsekp/edge_session.hpp"

namespace dsekp::edge {

/// `to` becomes a copy of `from`, keys included.
void copy_session(const EdgeSession& from, EdgeSession& to) noexcept;

/// `to` becomes a copy of `from`, keys included.
void copy_device_state(const EdgeDeviceState& from, EdgeDeviceState& to) noexcept;

}  // namespace dsekp::edge
