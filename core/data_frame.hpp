// Sealing and opening one DATA or downlink frame under a session's direction keys (internal to
// core/: applications go through DeviceSession and EdgeProtocol, which own seq and the nonce).
//
// nonce = IV_base XOR seq, AAD = every cleartext header field (key_schedule.hpp). Opening checks a
// JSON frame's `iv` against the derived nonce, then the tag; no plaintext is released unless the
// tag verifies. Replay checking is not done here (see ReplayWindow): the edge and device decide
// when to move their windows, after this succeeds.
#pragma once

#include <cstdint>

#include "dsekp/crypto.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"
#include "dsekp/key_schedule.hpp"

namespace dsekp {

/// Fills `out` (all fields, iv included) with the encryption of `plaintext`.
Error seal_data_frame(CryptoBackend& crypto, const DirectionKeys& keys, Direction direction,
                      const DevId& dev_id, std::uint16_t sessctr, std::uint32_t seq,
                      std::uint64_t sendts_ms, ByteView plaintext, DataFrame& out) noexcept;

/// Authenticates and decrypts `frame` into `plaintext` (at least frame.ciphertext.size() bytes);
/// sets `plaintext_size`. nonce_mismatch, auth_failed or buffer_too_small on failure.
Error open_data_frame(CryptoBackend& crypto, const DirectionKeys& keys, const DataFrame& frame,
                      MutableByteView plaintext, std::size_t& plaintext_size) noexcept;

}  // namespace dsekp
