// Standard padded base64 (RFC 4648 section 4) for the JSON profile's byte fields.
//
// Built on mbedTLS's portable mbedtls_base64_encode/decode rather than a codec of our own: the
// same small C implementation is available on every target we build for, the MCU build included,
// so the device and the edge share one well-tested implementation and we maintain none.
// What this wrapper adds is strictness: decode() accepts only the canonical encoding of a byte
// string (length a multiple of 4, padding present, no whitespace or line breaks, unused bits
// zero), so every byte string has exactly one accepted spelling on the wire.
// No heap: encoding goes through a small stack buffer.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "dsekp/error.hpp"

namespace dsekp::base64 {

/// Number of characters the padded encoding of `n` bytes takes.
[[nodiscard]] constexpr std::size_t encoded_size(std::size_t n) noexcept {
  return (n / 3 + (n % 3 != 0 ? 1 : 0)) * 4;
}

/// Writes the padded encoding of `in` (exactly encoded_size(in.size()) chars, no terminator) to
/// `out`. buffer_too_small if `out` is shorter; `written` is 0 then. `in` may lie inside `out`
/// at or after out.data() + encoded_size(in.size()) - in.size(): each 48-byte chunk of `in` is
/// read before its 64 characters are written, and the text never reaches unread input.
Error encode(ByteView in, std::span<char> out, std::size_t& written) noexcept;

/// Decodes canonical padded base64. bad_base64 for anything else; buffer_too_small if the decoded
/// bytes do not fit in `out`. `written` is 0 on error; `out` may have been written to.
Error decode(std::string_view text, MutableByteView out, std::size_t& written) noexcept;

}  // namespace dsekp::base64
