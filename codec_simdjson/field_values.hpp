// Conversion of one member's raw JSON text (as MemberScanner returns it) into a frame field, with
// the portable decoder's rules (internal to codec_simdjson).
//
// Each function answers only "does the portable decoder accept this value, and as what?": they
// return false for anything it rejects, without naming the reason, because the fast path never
// reports errors itself (simd_codec.hpp). Strings are checked on their raw text, so any escape
// sequence is rejected by the alphabet checks, as in the portable decoder.
#pragma once

#include <cstdint>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "dsekp/spec.hpp"

namespace dsekp::simd_detail {

/// Canonical unsigned decimal (no sign, fraction, exponent or leading zero) not above `max`.
[[nodiscard]] bool read_uint(std::string_view raw, std::uint64_t max, std::uint64_t& out) noexcept;

/// A JSON string whose characters form a valid dev_id.
[[nodiscard]] bool read_dev_id(std::string_view raw, DevId& out) noexcept;

/// A JSON string of canonical base64 decoding to exactly out.size() bytes.
[[nodiscard]] bool read_fixed(std::string_view raw, MutableByteView out) noexcept;

/// A JSON string of canonical base64 decoding to at most kMaxPayloadSize bytes.
[[nodiscard]] bool read_payload(std::string_view raw, BoundedBytes<kMaxPayloadSize>& out) noexcept;

}  // namespace dsekp::simd_detail
