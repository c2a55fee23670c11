// Strict padded base64 (RFC 4648 section 4) decoding on OpenSSL's EVP_DecodeBlock (internal to
// codec_simdjson).
//
// EVP_DecodeBlock is fast but lax: it skips leading and trailing whitespace, treats '=' as a
// zero digit anywhere and always writes 3 bytes per 4 characters, padding included. So the text's
// form is validated here first (length a multiple of 4, alphabet characters only, '=' only as
// the last one or two characters, unused bits of the last digit zero) and the exact length is
// computed from the padding; only then is the decoding left to OpenSSL. The accepted language is
// exactly the portable core/base64.hpp decoder's: one spelling per byte string.
#pragma once

#include <cstddef>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "dsekp/error.hpp"

namespace dsekp::simd_detail::base64 {

/// Decodes canonical padded base64 into `out`. bad_base64 for anything else; buffer_too_small if
/// the decoded bytes do not fit. The checks run in the portable decoder's order (form, then size,
/// then unused bits), so both always return the same Error. `written` is 0 on error; `out` may
/// have been written to.
Error decode(std::string_view text, MutableByteView out, std::size_t& written) noexcept;

}  // namespace dsekp::simd_detail::base64
