// Encoder and strict decoder of the compact binary profile (layouts in codec_compact.hpp).
#include "codec_compact.hpp"

#include <algorithm>
#include <string_view>

#include "codec_limits.hpp"
#include "codec_reader.hpp"
#include "codec_writer.hpp"

namespace dsekp::codec_detail::compact {
namespace {

constexpr std::uint8_t type_byte(FrameType t) noexcept {
  return static_cast<std::uint8_t>(t);
}

constexpr FrameType data_type(Direction d) noexcept {
  return d == Direction::uplink ? FrameType::data : FrameType::down;
}

Error finish(const Writer& w, std::size_t& written) noexcept {
  if (!w.ok()) return Error::buffer_too_small;
  written = w.size();
  return Error::ok;
}

void put_dev_id(Writer& w, const DevId& id) noexcept {
  w.u8(static_cast<std::uint8_t>(id.size()));  // codec.cpp guarantees 1..64
  w.bytes(id.view());
}

Error read_type(Reader& r, FrameType expected) noexcept {
  std::uint8_t type = 0;
  if (!r.u8(type)) return Error::frame_empty;
  return type == type_byte(expected) ? Error::ok : Error::unknown_frame_type;
}

Error read_dev_id(Reader& r, DevId& out) noexcept {
  std::uint8_t len = 0;
  if (!r.u8(len)) return Error::truncated;
  // A length outside 1..64 is a bad dev_id even if the frame is also short: the length byte is
  // already wrong, whatever follows.
  if (len == 0 || len > kDevIdMaxSize) return Error::bad_dev_id;
  ByteView id;
  if (!r.take(len, id)) return Error::truncated;
  return out.assign(std::string_view(reinterpret_cast<const char*>(id.data()), id.size()));
}

template <typename Fixed>
bool read_fixed(Reader& r, Fixed& out) noexcept {
  ByteView b;
  return r.take(Fixed::size(), b) && out.assign(b);
}

Error read_sendts(Reader& r, std::uint64_t& out) noexcept {
  if (!r.be64(out)) return Error::truncated;
  // Same range as the JSON profile, so every compact frame can be re-encoded as JSON.
  return out <= kMaxSendTs ? Error::ok : Error::bad_integer;
}

// The variable ciphertext runs up to the 16-byte tag that ends the frame; it is copied into
// `storage` and its length set in `n`.
Error read_ciphertext_and_tag(Reader& r, MutableByteView storage, std::size_t& n,
                              AeadTag& tag) noexcept {
  if (r.remaining() < kTagSize) return Error::truncated;
  n = r.remaining() - kTagSize;
  if (n > kMaxPayloadSize) return Error::payload_too_large;
  if (n > storage.size()) return Error::buffer_too_small;
  ByteView ct;
  if (!r.take(n, ct)) return Error::truncated;
  std::copy(ct.begin(), ct.end(), storage.begin());
  if (!read_fixed(r, tag)) return Error::truncated;
  return Error::ok;
}

}  // namespace

Error encode(const InitFrame& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  w.u8(type_byte(FrameType::init));
  put_dev_id(w, f.dev_id);
  w.be16(f.sessctr);
  w.be32(f.t);
  w.bytes(f.dev_nonce.view());
  w.bytes(f.proof.view());
  return finish(w, written);
}

Error encode(const AckFrame& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  w.u8(type_byte(FrameType::ack));
  put_dev_id(w, f.dev_id);
  w.be16(f.sessctr);
  w.bytes(f.edge_nonce.view());
  w.u8(f.status);
  w.bytes(f.proof.view());
  return finish(w, written);
}

Error encode(const DataFrameView& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  w.u8(type_byte(data_type(f.direction)));
  put_dev_id(w, f.dev_id);
  w.be16(f.sessctr);
  w.be32(f.seq);
  w.be64(f.sendts_ms);
  w.bytes(f.ciphertext);  // no iv: the receiver derives the nonce
  w.bytes(f.tag.view());
  return finish(w, written);
}

Error encode(const PskFrame& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  w.u8(type_byte(FrameType::psk));
  put_dev_id(w, f.dev_id);
  w.be32(f.seq);
  w.be64(f.sendts_ms);
  w.bytes(f.iv.view());  // the baseline's IV is random, so it must travel
  w.bytes(f.ciphertext.view());
  w.bytes(f.tag.view());
  return finish(w, written);
}

Error encode(const RekeyFrame& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  w.u8(type_byte(FrameType::rekey));
  put_dev_id(w, f.dev_id);
  w.be16(f.sessctr);
  w.be32(f.seq);
  w.bytes(f.proof.view());
  return finish(w, written);
}

Error decode_init(ByteView wire, InitFrame& out) noexcept {
  Reader r(wire);
  if (const Error e = read_type(r, FrameType::init); e != Error::ok) return e;
  if (const Error e = read_dev_id(r, out.dev_id); e != Error::ok) return e;
  if (!r.be16(out.sessctr) || !r.be32(out.t) || !read_fixed(r, out.dev_nonce) ||
      !read_fixed(r, out.proof)) {
    return Error::truncated;
  }
  return r.remaining() == 0 ? Error::ok : Error::trailing_bytes;
}

Error decode_ack(ByteView wire, AckFrame& out) noexcept {
  Reader r(wire);
  if (const Error e = read_type(r, FrameType::ack); e != Error::ok) return e;
  if (const Error e = read_dev_id(r, out.dev_id); e != Error::ok) return e;
  if (!r.be16(out.sessctr) || !read_fixed(r, out.edge_nonce) || !r.u8(out.status) ||
      !read_fixed(r, out.proof)) {
    return Error::truncated;
  }
  return r.remaining() == 0 ? Error::ok : Error::trailing_bytes;
}

Error decode_data(ByteView wire, Direction direction, DataFrameView& out,
                  MutableByteView ciphertext) noexcept {
  Reader r(wire);
  if (const Error e = read_type(r, data_type(direction)); e != Error::ok) return e;
  out.direction = direction;
  if (const Error e = read_dev_id(r, out.dev_id); e != Error::ok) return e;
  if (!r.be16(out.sessctr) || !r.be32(out.seq)) return Error::truncated;
  if (const Error e = read_sendts(r, out.sendts_ms); e != Error::ok) return e;
  out.has_iv = false;
  out.iv = AeadNonce{};
  std::size_t n = 0;
  const Error e = read_ciphertext_and_tag(r, ciphertext, n, out.tag);
  out.ciphertext = ciphertext.first(e == Error::ok ? n : 0);
  return e;
}

Error decode_psk(ByteView wire, PskFrame& out) noexcept {
  Reader r(wire);
  if (const Error e = read_type(r, FrameType::psk); e != Error::ok) return e;
  if (const Error e = read_dev_id(r, out.dev_id); e != Error::ok) return e;
  if (!r.be32(out.seq)) return Error::truncated;
  if (const Error e = read_sendts(r, out.sendts_ms); e != Error::ok) return e;
  if (!read_fixed(r, out.iv)) return Error::truncated;
  std::size_t n = 0;
  if (const Error e = read_ciphertext_and_tag(r, out.ciphertext.storage(), n, out.tag);
      e != Error::ok) {
    return e;
  }
  return out.ciphertext.resize(n) ? Error::ok : Error::payload_too_large;
}

Error decode_rekey(ByteView wire, RekeyFrame& out) noexcept {
  Reader r(wire);
  if (const Error e = read_type(r, FrameType::rekey); e != Error::ok) return e;
  if (const Error e = read_dev_id(r, out.dev_id); e != Error::ok) return e;
  if (!r.be16(out.sessctr) || !r.be32(out.seq) || !read_fixed(r, out.proof)) {
    return Error::truncated;
  }
  return r.remaining() == 0 ? Error::ok : Error::trailing_bytes;
}

}  // namespace dsekp::codec_detail::compact
