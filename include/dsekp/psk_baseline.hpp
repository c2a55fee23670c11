// The paper's static-PSK baseline, reproduced faithfully for the comparison experiment.
//
// BASELINE ONLY, NOT SECURE: one static AES-128-GCM key per device, a random 12-byte IV per frame,
// no AAD (dev_id, seq and sendts_ms are not authenticated), no replay protection. This is what the
// paper compares DSEKP against; use DSEKP sessions for anything real.
#pragma once

#include <cstdint>

#include "dsekp/crypto.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"

namespace dsekp {

Error psk_seal(CryptoBackend& crypto, const PskKey& key, const DevId& dev_id, std::uint32_t seq,
               std::uint64_t sendts_ms, ByteView plaintext, Rng& rng, PskFrame& out) noexcept;

Error psk_open(CryptoBackend& crypto, const PskKey& key, const PskFrame& frame,
               MutableByteView plaintext, std::size_t& plaintext_size) noexcept;

}  // namespace dsekp
