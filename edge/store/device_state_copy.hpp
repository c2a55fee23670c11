// Explicit copies (and the clearing for reuse) of an EdgeDeviceState, which is move-only so that
// its keys are never duplicated by accident: the write-back (state_write_back.hpp) keeps the newest
// state of a device in a transaction and hands each load a copy, so that a message that fails
// leaves it untouched. A copy touches only the session slots in use: a state is 3.4 KB, nearly all
// of it empty slots, and the edge copies one in and out for every DATA frame.
#pragma once

#include "dsekp/edge_session.hpp"

namespace dsekp::edge {

/// `to` becomes a copy of `from`, keys included.
void copy_session(const EdgeSession& from, EdgeSession& to) noexcept;

/// `to` becomes a copy of `from`, keys included.
void copy_device_state(const EdgeDeviceState& from, EdgeDeviceState& to) noexcept;

/// `state` becomes the empty state (as default-constructed), its keys wiped; only the slots it
/// used are rewritten, so reusing one state object is cheaper than constructing a new one.
void clear_device_state(EdgeDeviceState& state) noexcept;

}  // namespace dsekp::edge
