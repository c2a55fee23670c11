// Strict numeric field parsing (see number_parse.hpp).
#include "number_parse.hpp"

#include <charconv>
#include <cmath>

namespace dsekp::analyze {

std::optional<std::uint64_t> parse_unsigned(std::string_view text, std::uint64_t max) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value > max) return std::nullopt;
  return value;
}

std::optional<double> parse_real(std::string_view text) {
  // from_chars accepts "inf"/"nan" and a leading '-' but not '+'; we want neither inf nor nan,
  // so the first character must start a plain number.
  if (text.empty()) return std::nullopt;
  const char first = text.front() == '-' && text.size() > 1 ? text[1] : text.front();
  if (!((first >= '0' && first <= '9') || first == '.')) return std::nullopt;
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

}  // namespace dsekp::analyze
