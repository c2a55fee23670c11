// UTF-8 validation with simdjson's validator (the edge's one dependency that has one), for
// code outside this library that must not link simdjson itself.
#pragma once

#include <string_view>

namespace dsekp {

/// True if `text` is well-formed UTF-8 (RFC 3629: no overlongs, surrogates or values > U+10FFFF).
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

}  // namespace dsekp
