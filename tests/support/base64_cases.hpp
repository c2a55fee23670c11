// Base64 cases every strict decoder of the project must get right: the RFC 4648 vectors, and the
// spellings it must refuse (only RFC 4648 section 4 with padding is accepted). Shared by the
// portable decoder's and the simdjson decoder's tests, so both are held to the same lists.
#pragma once

#include <string_view>
#include <utility>

namespace dsekp::test {

/// RFC 4648 section 10 test vectors: (plain text, base64).
inline constexpr std::pair<std::string_view, std::string_view> kRfc4648Base64[] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

inline constexpr std::string_view kNonCanonicalBase64[] = {
    "Zg",        // padding missing
    "Zg=",       // padding short
    "Zm8",       // padding missing
    "Zh==",      // unused bits set (canonical: Zg==)
    "Zm9=",      // unused bits set (canonical: Zm8=)
    "Zg===",     // too much padding
    "Zm9v====",  // a whole group of padding
    "====",      // nothing but padding
    "A===",      // three padding characters
    "Zg==Zg==",  // padding in the middle
    "Zm=v",      // padding inside a group (OpenSSL alone would take '=' as a zero digit)
    "=m9v",      // padding first
    "Zm9 v",     // space
    " Zm9v",     // leading space (OpenSSL alone would skip it)
    "Zm9v ",     // trailing space
    "Zm9v    ",  // trailing spaces, length a multiple of 4 (OpenSSL alone would strip them)
    "   Zm9v",   // leading spaces
    "Zm9v\n",    // line break
    "Zm\r\n9v",  // CRLF inside
    "Zm9\tv",    // tab
    "Zm-v",      // base64url alphabet ('-' is OpenSSL's end-of-data marker)
    "Zm_v",      // base64url alphabet
    "Zm9\\",     // backslash (a JSON escape would put one here)
    "Zm9\x80",   // non-ASCII
    "Zm9\xff",   // non-ASCII
};

}  // namespace dsekp::test
