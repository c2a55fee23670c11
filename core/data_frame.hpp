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

/// The cleartext fields of a frame being sealed (they all go into the AAD).
struct DataHeaderFields {
  Direction direction;
  const DevId& dev_id;
  std::uint16_t sessctr;
  std::uint32_t seq;
  std::uint64_t sendts_ms;
};

/// Fills `out` (all fields, iv included) with the encryption of `plaintext`, its ciphertext
/// written to the first plaintext.size() bytes of `ciphertext` (which may be `plaintext` itself).
Error seal_data_frame(CryptoBackend& crypto, const DirectionKeys& keys,
                      const DataHeaderFields& header, ByteView plaintext,
                      MutableByteView ciphertext, DataFrameView& out) noexcept;
/// As above, the ciphertext inline in `out`.
Error seal_data_frame(CryptoBackend& crypto, const DirectionKeys& keys,
                      const DataHeaderFields& header, ByteView plaintext, DataFrame& out) noexcept;

/// Authenticates and decrypts `frame` into `plaintext` (at least its ciphertext's size; may be
/// the ciphertext itself); sets `plaintext_size`. nonce_mismatch, auth_failed or
/// buffer_too_small on failure.
template <typename Frame>
Error open_data_frame(CryptoBackend& crypto, const DirectionKeys& keys, const Frame& frame,
                      MutableByteView plaintext, std::size_t& plaintext_size) noexcept;
extern template Error open_data_frame(CryptoBackend&, const DirectionKeys&, const DataFrame&,
                                      MutableByteView, std::size_t&) noexcept;
extern template Error open_data_frame(CryptoBackend&, const DirectionKeys&, const DataFrameView&,
                                      MutableByteView, std::size_t&) noexcept;

}  // namespace dsekp
