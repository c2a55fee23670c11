// The golden trace of DSEKP v1: for fixed inputs, every intermediate value of the key schedule and
// every frame on the wire, in a fixed order. docs/PROTOCOL.md prints it; the committed
// tests/vectors/golden_trace_v1.json is checked against it on both crypto backends, and
// verify_golden_trace.py re-derives it independently (Python standard library, no AES-GCM).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dsekp/crypto.hpp"

namespace dsekp::golden {

/// (name, value): byte values are lowercase hex; names ending in "_json" are the JSON text;
/// plain integers are decimal.
using Trace = std::vector<std::pair<std::string, std::string>>;

/// Computes the trace with `crypto`. The frames come from the real DeviceSession and EdgeProtocol
/// (with scripted randomness); the intermediates are re-derived from the spec's formulas with the
/// backend's primitives, and the two are checked against each other. Throws std::runtime_error on
/// any inconsistency.
Trace compute_golden_trace(CryptoBackend& crypto);

}  // namespace dsekp::golden
