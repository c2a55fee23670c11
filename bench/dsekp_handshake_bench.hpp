// CPU cost of one complete DSEKP v1 handshake, both sides in one thread: device INIT (key
// schedule + proof), edge verification + ACK + traffic keys, device ACK verification + traffic
// keys; optionally the session's first DATA frame (key confirmation), without or with the ratchet
// (PROTOCOL.md 6.6), whose cost is the difference. Used by `dsekp bench handshake` beside the
// TLS 1.3 figures of tls_handshake.hpp.
#pragma once

#include <cstddef>
#include <string>

#include "dsekp/codec.hpp"
#include "dsekp/crypto.hpp"

namespace dsekp::bench {

/// What one timed handshake includes.
struct HandshakeScope {
  bool with_codec = false;    // INIT and ACK also encoded and decoded (JSON)
  bool confirmation = false;  // also the session's first DATA frame, sealed and opened
  bool ratchet = false;       // both sides in ratchet mode (implies confirmation); the device's
                              // store keeps the secret in memory (the write itself not timed)
};

struct DsekpHandshakeStats {
  std::string backend;      // crypto backend of both sides
  bool with_codec = false;  // INIT and ACK also encoded and decoded (JSON)
  bool confirmation = false;
  bool ratchet = false;
  std::size_t iterations = 0;  // handshakes timed, in batches of 25
  double cpu_us_mean = 0;      // per handshake
  double cpu_us_median = 0;    // median over batches of the per-handshake mean
  double cpu_us_min = 0;       // best batch
};

/// Runs `iterations` handshakes (after a warm-up) with `device_crypto` and `edge_crypto` and the
/// real randomness of `rng`. Throws std::runtime_error if any handshake fails.
DsekpHandshakeStats measure_dsekp_handshake(CryptoBackend& device_crypto,
                                            CryptoBackend& edge_crypto, Rng& rng,
                                            std::size_t iterations, HandshakeScope scope);

/// Thread CPU nanoseconds of one ratchet step (derive_next_secret), median over batches: what
/// each side adds per session in ratchet mode, and the edge per look-ahead step.
double measure_ratchet_step_ns(CryptoBackend& crypto, std::size_t iterations);

}  // namespace dsekp::bench
