// The public codec API (dsekp/codec.hpp): size limits, encoding detection, encoder argument
// checks, and dispatch to the JSON or compact profile (either may be left out of a firmware
// build: dsekp/encodings_built.hpp).
#include "dsekp/codec.hpp"

#include "codec_compact.hpp"
#include "codec_json.hpp"
#include "codec_limits.hpp"
#include "dsekp/encodings_built.hpp"

namespace dsekp {
namespace {

using codec_detail::kMaxSendTs;

constexpr std::uint8_t kJsonFirstByte = '{';

// Checks common to every decoder, before the encoding is even known.
Error check_size(ByteView wire) noexcept {
  if (wire.empty()) return Error::frame_empty;
  if (wire.size() > kMaxFrameSize) return Error::frame_too_large;
  return Error::ok;
}

// Encoders refuse values the decoders would reject, so that we never put a frame on the wire that
// our own peer cannot read. A default-constructed DevId (empty) is the likely caller mistake.
Error check_values(const DevId& dev_id, std::uint64_t sendts_ms = 0) noexcept {
  if (dev_id.size() == 0 || sendts_ms > kMaxSendTs) return Error::invalid_argument;
  return Error::ok;
}

// The one overlap the DATA encoders handle (codec.hpp): the ciphertext is the tail of an output
// buffer of at least max_encoded_data_size(). The JSON encoder then writes the base64 of each
// 48-byte chunk only after reading it, and never catches up with unread bytes (base64.hpp);
// the compact encoder copies it forward to an offset below its own.
bool ciphertext_placement_ok(ByteView ciphertext, MutableByteView out) noexcept {
  if (!overlap(ciphertext, out)) return true;
  return ciphertext.data() + ciphertext.size() == out.data() + out.size() &&
         out.size() >= max_encoded_data_size(ciphertext.size());
}

// A profile left out of the build is never referenced, so the linker drops its code.
template <typename Frame>
Error dispatch_encode(const Frame& f, Encoding enc, MutableByteView out,
                      std::size_t& written) noexcept {
  if (enc == Encoding::json) {
    if constexpr (kJsonEncodingBuilt) return codec_detail::json::encode(f, out, written);
  } else {
    if constexpr (kCompactEncodingBuilt) return codec_detail::compact::encode(f, out, written);
  }
  return Error::invalid_argument;
}

template <typename DecodeJson, typename DecodeCompact>
Error dispatch_decode(ByteView wire, DecodeJson&& json, DecodeCompact&& compact) noexcept {
  if (detect_encoding(wire) == Encoding::json) {
    if constexpr (kJsonEncodingBuilt) return json();
  } else {
    if constexpr (kCompactEncodingBuilt) return compact();
  }
  return Error::unknown_frame_type;
}

}  // namespace

Encoding detect_encoding(ByteView wire) noexcept {
  return !wire.empty() && wire[0] == kJsonFirstByte ? Encoding::json : Encoding::compact;
}

Error encode(const InitFrame& f, Encoding enc, MutableByteView out, std::size_t& written) noexcept {
  written = 0;
  if (const Error e = check_values(f.dev_id); e != Error::ok) return e;
  return dispatch_encode(f, enc, out, written);
}

Error encode(const AckFrame& f, Encoding enc, MutableByteView out, std::size_t& written) noexcept {
  written = 0;
  if (const Error e = check_values(f.dev_id); e != Error::ok) return e;
  return dispatch_encode(f, enc, out, written);
}

Error encode(const DataFrame& f, Encoding enc, MutableByteView out, std::size_t& written) noexcept {
  return encode(view_of(f), enc, out, written);
}

Error encode(const DataFrameView& f, Encoding enc, MutableByteView out,
             std::size_t& written) noexcept {
  written = 0;
  if (const Error e = check_values(f.dev_id, f.sendts_ms); e != Error::ok) return e;
  if (!ciphertext_placement_ok(f.ciphertext, out)) return Error::invalid_argument;
  return dispatch_encode(f, enc, out, written);
}

Error encode(const PskFrame& f, Encoding enc, MutableByteView out, std::size_t& written) noexcept {
  written = 0;
  if (const Error e = check_values(f.dev_id, f.sendts_ms); e != Error::ok) return e;
  return dispatch_encode(f, enc, out, written);
}

Error encode(const RekeyFrame& f, Encoding enc, MutableByteView out,
             std::size_t& written) noexcept {
  written = 0;
  if (const Error e = check_values(f.dev_id); e != Error::ok) return e;
  return dispatch_encode(f, enc, out, written);
}

Error decode_init(ByteView wire, InitFrame& out) noexcept {
  if (const Error e = check_size(wire); e != Error::ok) return e;
  return dispatch_decode(
      wire, [&] { return codec_detail::json::decode_init(wire, out); },
      [&] { return codec_detail::compact::decode_init(wire, out); });
}

Error decode_ack(ByteView wire, AckFrame& out) noexcept {
  if (const Error e = check_size(wire); e != Error::ok) return e;
  return dispatch_decode(
      wire, [&] { return codec_detail::json::decode_ack(wire, out); },
      [&] { return codec_detail::compact::decode_ack(wire, out); });
}

Error decode_data(ByteView wire, Direction direction, DataFrame& out) noexcept {
  return fill_data_frame(out, [&](MutableByteView storage, DataFrameView& view) {
    return decode_data(wire, direction, view, storage);
  });
}

Error decode_data(ByteView wire, Direction direction, DataFrameView& out,
                  MutableByteView ciphertext) noexcept {
  out.ciphertext = ByteView();
  if (const Error e = check_size(wire); e != Error::ok) return e;
  if (overlap(wire, ciphertext)) return Error::invalid_argument;
  return dispatch_decode(
      wire, [&] { return codec_detail::json::decode_data(wire, direction, out, ciphertext); },
      [&] { return codec_detail::compact::decode_data(wire, direction, out, ciphertext); });
}

Error decode_psk(ByteView wire, PskFrame& out) noexcept {
  if (const Error e = check_size(wire); e != Error::ok) return e;
  return dispatch_decode(
      wire, [&] { return codec_detail::json::decode_psk(wire, out); },
      [&] { return codec_detail::compact::decode_psk(wire, out); });
}

Error decode_rekey(ByteView wire, RekeyFrame& out) noexcept {
  if (const Error e = check_size(wire); e != Error::ok) return e;
  return dispatch_decode(
      wire, [&] { return codec_detail::json::decode_rekey(wire, out); },
      [&] { return codec_detail::compact::decode_rekey(wire, out); });
}

std::size_t max_encoded_data_size(std::size_t payload_size) noexcept {
  // JSON is always the larger encoding (base64 and member names); take the max anyway so the
  // bound stays right if either layout changes.
  const std::size_t json = codec_detail::json::max_data_frame_size(payload_size);
  const std::size_t compact = codec_detail::compact::data_frame_size(kDevIdMaxSize, payload_size);
  return json > compact ? json : compact;
}

}  // namespace dsekp
