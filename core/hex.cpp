// Hex encoding and decoding (see hex.hpp).
#include "hex.hpp"

#include <climits>
#include <cstdint>

namespace dsekp::hex {
namespace {

// All-ones if a <= x <= b, else zero, for values 0..255, without a branch: x - a or b - x wraps
// around, setting the top bit, exactly when x is outside.
static_assert(sizeof(unsigned) * CHAR_BIT == 32);
constexpr unsigned in_range(unsigned x, unsigned a, unsigned b) noexcept {
  return 0u - ((((x - a) | (b - x)) >> 31) ^ 1u);
}

// The value 0..15 of a hex digit of either case, or -1.
constexpr int digit_value(char c) noexcept {
  const unsigned x = static_cast<unsigned char>(c);
  const unsigned lower = x | 0x20u;  // 'A'..'F' become 'a'..'f'; digits are unchanged
  const unsigned is_digit = in_range(x, '0', '9');
  const unsigned is_letter = in_range(lower, 'a', 'f');
  const unsigned value = (is_digit & (x - '0')) | (is_letter & (lower - 'a' + 10));
  return static_cast<int>(value | ~(is_digit | is_letter));
}

// The lowercase digit of a value 0..15.
constexpr char digit(unsigned v) noexcept {
  // '0' + v, plus 'a' - '0' - 10 when v > 9.
  return static_cast<char>('0' + v + (in_range(v, 10, 15) & ('a' - '0' - 10)));
}

static_assert(digit_value('0') == 0 && digit_value('9') == 9 && digit_value('a') == 10 &&
              digit_value('F') == 15 && digit_value('g') == -1 && digit_value('/') == -1 &&
              digit_value(':') == -1 && digit_value('@') == -1 && digit_value('`') == -1 &&
              digit_value('G') == -1 && digit_value('\xe1') == -1);
static_assert(digit(0) == '0' && digit(9) == '9' && digit(10) == 'a' && digit(15) == 'f');

}  // namespace

bool encode(ByteView in, std::span<char> out) noexcept {
  if (out.size() / 2 < in.size()) return false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[2 * i] = digit(in[i] >> 4u);
    out[2 * i + 1] = digit(in[i] & 0x0fu);
  }
  return true;
}

std::size_t find_non_digit(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (digit_value(text[i]) < 0) return i;
  }
  return text.size();
}

bool decode(std::string_view text, MutableByteView out) noexcept {
  if (text.size() % 2 != 0 || out.size() < text.size() / 2) return false;
  const MutableByteView bytes = out.first(text.size() / 2);
  int bad = 0;  // negative once any digit was not one; checked after the loop, not in it
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const int hi = digit_value(text[2 * i]);
    const int lo = digit_value(text[2 * i + 1]);
    bad |= hi | lo;
    bytes[i] = static_cast<std::uint8_t>(((hi & 0x0f) << 4) | (lo & 0x0f));
  }
  if (bad < 0) {
    secure_wipe(bytes);
    return false;
  }
  return true;
}

}  // namespace dsekp::hex
