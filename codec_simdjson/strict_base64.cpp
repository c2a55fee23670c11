// Form check of canonical base64 followed by OpenSSL's EVP_DecodeBlock (see strict_base64.hpp).
#include "strict_base64.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace dsekp::simd_detail::base64 {
namespace {

constexpr std::int8_t kNotDigit = -1;

// The value of each base64 digit of the standard alphabet, kNotDigit for every other byte ('='
// included: padding is checked by position, not by table). Used to validate, not to decode.
constexpr std::array<std::int8_t, 256> kDigitValue = [] {
  std::array<std::int8_t, 256> table{};
  table.fill(kNotDigit);
  constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (std::size_t i = 0; i < 64; ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  }
  return table;
}();

std::int8_t digit_value(char c) noexcept {
  return kDigitValue[static_cast<unsigned char>(c)];
}

// Number of trailing '=' of canonical text (0, 1 or 2); text is non-empty, whole groups.
std::size_t padding_of(std::string_view text) noexcept {
  if (text.back() != '=') return 0;
  return text[text.size() - 2] == '=' ? 2 : 1;
}

// Output room for the single-call decoding of short values (see decode()).
constexpr std::size_t kScratchSize = 96;

// EVP_DecodeBlock on `n` characters (a multiple of 4) into exactly 3 * n / 4 bytes.
bool evp_decode(const char* text, std::size_t n, std::uint8_t* out) noexcept {
  const int rc =
      EVP_DecodeBlock(out, reinterpret_cast<const unsigned char*>(text), static_cast<int>(n));
  // Cannot fail for validated text; checked anyway, as it costs nothing.
  return rc >= 0 && static_cast<std::size_t>(rc) == n / 4 * 3;
}

}  // namespace

Error decode(std::string_view text, MutableByteView out, std::size_t& written) noexcept {
  written = 0;
  // Padding is mandatory, so canonical text always comes in whole 4-character groups.
  if (text.size() % 4 != 0) return Error::bad_base64;
  if (text.empty()) return Error::ok;

  const std::size_t pad = padding_of(text);
  // Every character before the padding must be a digit: this rejects whitespace, the base64url
  // alphabet, backslashes of JSON escapes and a '=' anywhere but in the last two places.
  std::uint8_t any_bad = 0;
  for (std::size_t i = 0; i < text.size() - pad; ++i) {
    any_bad |= static_cast<std::uint8_t>(digit_value(text[i]) == kNotDigit);
  }
  if (any_bad != 0) return Error::bad_base64;
  const std::size_t size = text.size() / 4 * 3 - pad;
  if (size > out.size()) return Error::buffer_too_small;
  // The last digit carries 4 (with "==") or 2 (with "=") bits that are not part of any byte; a
  // canonical encoder writes them as zero, so "QR==" is not another spelling of "QQ==". Checked
  // after the size because the portable decoder finds these only after decoding.
  const auto last = static_cast<unsigned>(digit_value(text[text.size() - pad - 1]));
  if ((pad == 2 && (last & 0x0FU) != 0) || (pad == 1 && (last & 0x03U) != 0)) {
    return Error::bad_base64;
  }

  // OpenSSL writes 3 bytes per group, the padding's included, so its output needs up to 2 bytes
  // more than `size`. One call straight into `out` when those fit, else one call into a stack
  // buffer (fixed-size fields and small payloads); only a long value in a tight buffer needs two,
  // the groups but the last straight into `out` and the last through a 3-byte scratch.
  const std::size_t full = text.size() / 4 * 3;
  if (full <= out.size()) {
    if (!evp_decode(text.data(), text.size(), out.data())) return Error::bad_base64;
  } else if (full <= kScratchSize) {
    std::uint8_t scratch[kScratchSize];
    if (!evp_decode(text.data(), text.size(), scratch)) return Error::bad_base64;
    std::memcpy(out.data(), scratch, size);
  } else {
    const std::size_t head = text.size() - 4;
    std::uint8_t tail[3];
    if (!evp_decode(text.data(), head, out.data()) || !evp_decode(text.data() + head, 4, tail)) {
      return Error::bad_base64;
    }
    std::memcpy(out.data() + head / 4 * 3, tail, 3 - pad);
  }
  written = size;
  return Error::ok;
}

}  // namespace dsekp::simd_detail::base64
