// Hex spellings of bytes: lowercase out, either case in, two characters per byte, no separators.
// Used for provisioning material (DEV_SECRET, EDGE_SALT in a device's credentials file), admin
// payloads and request ids, so the digits are converted without tables or data-dependent
// branches: the time does not depend on a secret's value.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "dsekp/bytes.hpp"

namespace dsekp::hex {

/// Writes the 2 * in.size() lowercase digits of `in` to `out`; false (nothing written) if `out`
/// is shorter.
[[nodiscard]] bool encode(ByteView in, std::span<char> out) noexcept;

/// The position of the first character of `text` that is not a hex digit, or text.size().
[[nodiscard]] std::size_t find_non_digit(std::string_view text) noexcept;

/// Decodes `text` into the first text.size() / 2 bytes of `out`. False, with nothing written, if
/// the length is odd or `out` is shorter; false, with those bytes wiped, if a character is not a
/// hex digit (find_non_digit says which).
[[nodiscard]] bool decode(std::string_view text, MutableByteView out) noexcept;

}  // namespace dsekp::hex
