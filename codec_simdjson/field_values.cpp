// Raw member text to frame fields with the portable decoder's rules (see field_values.hpp).
#include "field_values.hpp"

#include "strict_base64.hpp"

namespace dsekp::simd_detail {
namespace {

// The characters between the quotes of a JSON string token, or false if `raw` is not one. The
// inside may still hold quotes or backslashes of a longer token; every caller's alphabet check
// rejects both.
bool string_body(std::string_view raw, std::string_view& body) noexcept {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return false;
  body = raw.substr(1, raw.size() - 2);
  return true;
}

}  // namespace

bool read_uint(std::string_view raw, std::uint64_t max, std::uint64_t& out) noexcept {
  // One spelling per value: digits only, and no leading zero except for 0 itself.
  if (raw.empty() || raw.size() > 20 || (raw.size() > 1 && raw[0] == '0')) return false;
  // Only 20 digits can exceed 64 bits; ruling that out first keeps the loop free of overflow
  // tests (a division per digit would cost more than the rest of the loop). Digit strings of equal
  // length compare like their values; a non-digit fails either here or in the loop.
  if (raw.size() == 20 && raw > std::string_view("18446744073709551615")) return false;
  std::uint64_t v = 0;
  for (const char c : raw) {
    if (c < '0' || c > '9') return false;
    v = v * 10U + static_cast<std::uint64_t>(c - '0');
  }
  if (v > max) return false;
  out = v;
  return true;
}

bool read_dev_id(std::string_view raw, DevId& out) noexcept {
  std::string_view body;
  return string_body(raw, body) && out.assign(body) == Error::ok;
}

bool read_fixed(std::string_view raw, MutableByteView out) noexcept {
  std::string_view body;
  std::size_t n = 0;
  return string_body(raw, body) && base64::decode(body, out, n) == Error::ok && n == out.size();
}

bool read_payload(std::string_view raw, BoundedBytes<kMaxPayloadSize>& out) noexcept {
  std::string_view body;
  std::size_t n = 0;
  return string_body(raw, body) && base64::decode(body, out.storage(), n) == Error::ok &&
         out.resize(n);
}

}  // namespace dsekp::simd_detail
