// Strict parsing of the numeric CSV fields (std::from_chars: no locale, no allocation). A field
// that is not entirely one number in the expected form is rejected, so that a bad row is reported
// instead of being read as a wrong value.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dsekp::analyze {

/// Decimal digits only (no sign, no spaces, no exponent), at most `max`.
std::optional<std::uint64_t> parse_unsigned(std::string_view text, std::uint64_t max = UINT64_MAX);

/// A finite decimal number ("12", "-3.5", "1.7e3"); no "inf", "nan", hex or leading '+'.
std::optional<double> parse_real(std::string_view text);

}  // namespace dsekp::analyze
