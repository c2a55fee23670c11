// SimdJsonDecoder: the JSON fast path for DATA/DOWN and PSK frames, with the portable decoder as
// the fallback for everything the fast path does not accept (see simd_codec.hpp for why).
#include "codec_simdjson/simd_codec.hpp"

#include <array>
#include <cstdint>
#include <string_view>

#include "codec_limits.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/spec.hpp"
#include "field_values.hpp"
#include "member_scanner.hpp"

namespace dsekp {
namespace {

using codec_detail::kMaxSendTs;
using std::string_view;

// Member names, in the encoders' order (the fast path accepts any order).
constexpr std::array<string_view, 7> kDataFields = {"seq", "dev_id", "sessctr_id", "ciphertext",
                                                    "iv",  "tag",    "sendts_ms"};
constexpr std::array<string_view, 6> kPskFields = {"seq", "dev_id", "ciphertext",
                                                   "iv",  "tag",    "sendts_ms"};

constexpr std::uint8_t kJsonFirstByte = '{';

template <typename T>
bool read_uint_as(string_view raw, std::uint64_t max, T& out) noexcept {
  std::uint64_t v = 0;
  if (!simd_detail::read_uint(raw, max, v)) return false;
  out = static_cast<T>(v);  // in range: max fits T
  return true;
}

}  // namespace

SimdJsonDecoder::SimdJsonDecoder() : scanner_(std::make_unique<simd_detail::MemberScanner>()) {}
SimdJsonDecoder::~SimdJsonDecoder() = default;
SimdJsonDecoder::SimdJsonDecoder(SimdJsonDecoder&&) noexcept = default;
SimdJsonDecoder& SimdJsonDecoder::operator=(SimdJsonDecoder&&) noexcept = default;

bool SimdJsonDecoder::wants_fast_path(ByteView wire) const noexcept {
  // Everything else (compact, empty, oversized) is the portable decoder's from the first byte.
  return scanner_ != nullptr && !wire.empty() && wire.size() <= kMaxFrameSize &&
         wire[0] == kJsonFirstByte;
}

bool SimdJsonDecoder::fast_data(ByteView wire, Direction direction, DataFrame& out) noexcept {
  std::array<string_view, kDataFields.size()> v;
  if (!scanner_->scan(wire, kDataFields, v)) return false;
  out.direction = direction;
  out.has_iv = true;
  using namespace simd_detail;
  return read_uint_as(v[0], UINT32_MAX, out.seq) && read_dev_id(v[1], out.dev_id) &&
         read_uint_as(v[2], UINT16_MAX, out.sessctr) && read_payload(v[3], out.ciphertext) &&
         read_fixed(v[4], out.iv.mutable_view()) && read_fixed(v[5], out.tag.mutable_view()) &&
         read_uint_as(v[6], kMaxSendTs, out.sendts_ms);
}

bool SimdJsonDecoder::fast_psk(ByteView wire, PskFrame& out) noexcept {
  std::array<string_view, kPskFields.size()> v;
  if (!scanner_->scan(wire, kPskFields, v)) return false;
  using namespace simd_detail;
  return read_uint_as(v[0], UINT32_MAX, out.seq) && read_dev_id(v[1], out.dev_id) &&
         read_payload(v[2], out.ciphertext) && read_fixed(v[3], out.iv.mutable_view()) &&
         read_fixed(v[4], out.tag.mutable_view()) && read_uint_as(v[5], kMaxSendTs, out.sendts_ms);
}

Error SimdJsonDecoder::decode_data(ByteView wire, Direction direction, DataFrame& out) noexcept {
  if (!wants_fast_path(wire)) return dsekp::decode_data(wire, direction, out);
  if (fast_data(wire, direction, out)) {
    ++stats_.fast_accepts;
    return Error::ok;
  }
  // Not accepted: the portable decoder decides, so the verdict and its name are always its own.
  ++stats_.portable_fallbacks;
  return dsekp::decode_data(wire, direction, out);
}

Error SimdJsonDecoder::decode_psk(ByteView wire, PskFrame& out) noexcept {
  if (!wants_fast_path(wire)) return dsekp::decode_psk(wire, out);
  if (fast_psk(wire, out)) {
    ++stats_.fast_accepts;
    return Error::ok;
  }
  ++stats_.portable_fallbacks;
  return dsekp::decode_psk(wire, out);
}

}  // namespace dsekp
