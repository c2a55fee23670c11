// Argument rules both crypto backends enforce identically, so that the known-answer and contract
// tests see the same behaviour whichever library is underneath (internal to crypto/).
#pragma once

#include <cstdint>
#include <span>

#include "dsekp/bytes.hpp"
#include "dsekp/spec.hpp"

namespace dsekp::crypto_rules {

inline constexpr std::size_t kMaxOkmSize = 255 * kHashSize;  // RFC 5869 2.3: L <= 255 * HashLen

/// GCM can work in place (same start address) but not on buffers that overlap otherwise.
inline bool partial_overlap(ByteView in, ByteView out) noexcept {
  return overlap(in, out) && in.data() != out.data();
}

/// HKDF-Expand: 1..255*32 bytes of output, a PRK of at least HashLen bytes (RFC 5869 2.3; mbedTLS
/// refuses shorter ones too), and an output that overlaps no input (it would be overwritten
/// between blocks).
inline bool hkdf_expand_arguments_ok(ByteView prk, std::span<const ByteView> info_parts,
                                     ByteView okm) noexcept {
  bool ok =
      !okm.empty() && okm.size() <= kMaxOkmSize && prk.size() >= kHashSize && !overlap(okm, prk);
  for (ByteView part : info_parts) ok = ok && !overlap(okm, part);
  return ok;
}

/// AES-128-GCM: a 16-byte key, output as long as the input, in place or not overlapping at all.
inline bool gcm_arguments_ok(ByteView key, ByteView in, ByteView out) noexcept {
  return key.size() == kAeadKeySize && in.size() == out.size() && !partial_overlap(in, out);
}

}  // namespace dsekp::crypto_rules
