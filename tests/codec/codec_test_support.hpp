// Shared helpers of the codec tests: sample frames, frame equality and printing, and thin
// wrappers that encode into / decode from std containers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "dsekp/codec.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"

namespace dsekp {

// GoogleTest prints an Error by name instead of as a raw byte.
inline void PrintTo(Error e, std::ostream* os) {
  *os << error_name(e);
}

inline bool operator==(const InitFrame& a, const InitFrame& b) {
  return a.dev_id == b.dev_id && a.sessctr == b.sessctr && a.t == b.t &&
         a.dev_nonce.equals(b.dev_nonce) && a.proof.equals(b.proof);
}
inline bool operator==(const AckFrame& a, const AckFrame& b) {
  return a.dev_id == b.dev_id && a.sessctr == b.sessctr && a.edge_nonce.equals(b.edge_nonce) &&
         a.status == b.status && a.proof.equals(b.proof);
}
inline bool operator==(const DataFrame& a, const DataFrame& b) {
  const auto ca = a.ciphertext.view();
  const auto cb = b.ciphertext.view();
  return a.direction == b.direction && a.dev_id == b.dev_id && a.sessctr == b.sessctr &&
         a.seq == b.seq && a.sendts_ms == b.sendts_ms && a.has_iv == b.has_iv &&
         a.iv.equals(b.iv) && std::equal(ca.begin(), ca.end(), cb.begin(), cb.end()) &&
         a.tag.equals(b.tag);
}
inline bool operator==(const PskFrame& a, const PskFrame& b) {
  const auto ca = a.ciphertext.view();
  const auto cb = b.ciphertext.view();
  return a.dev_id == b.dev_id && a.seq == b.seq && a.sendts_ms == b.sendts_ms &&
         a.iv.equals(b.iv) && std::equal(ca.begin(), ca.end(), cb.begin(), cb.end()) &&
         a.tag.equals(b.tag);
}

inline bool operator==(const RekeyFrame& a, const RekeyFrame& b) {
  return a.dev_id == b.dev_id && a.sessctr == b.sessctr && a.seq == b.seq &&
         a.proof.equals(b.proof);
}

inline void PrintTo(const InitFrame& f, std::ostream* os) {
  *os << "INIT{" << f.dev_id.str() << " sessctr=" << f.sessctr << " t=" << f.t << "}";
}
inline void PrintTo(const AckFrame& f, std::ostream* os) {
  *os << "ACK{" << f.dev_id.str() << " sessctr=" << f.sessctr << " status=" << +f.status << "}";
}
inline void PrintTo(const DataFrame& f, std::ostream* os) {
  *os << "DATA{" << f.dev_id.str() << " sessctr=" << f.sessctr << " seq=" << f.seq
      << " ts=" << f.sendts_ms << " ct=" << f.ciphertext.size() << "B has_iv=" << f.has_iv << "}";
}
inline void PrintTo(const PskFrame& f, std::ostream* os) {
  *os << "PSK{" << f.dev_id.str() << " seq=" << f.seq << " ts=" << f.sendts_ms
      << " ct=" << f.ciphertext.size() << "B}";
}

namespace test {

using Bytes = std::vector<std::uint8_t>;

inline constexpr std::uint64_t kMaxSendTs = (std::uint64_t{1} << 53) - 1;

inline DevId make_dev_id(std::string_view s) {
  DevId id;
  EXPECT_EQ(id.assign(s), Error::ok) << s;
  return id;
}

/// A fixed-size value whose bytes count up from `first`.
template <typename Fixed>
Fixed counting(std::uint8_t first) {
  Fixed out;
  for (std::size_t i = 0; i < Fixed::size(); ++i)
    out.data()[i] = static_cast<std::uint8_t>(first + i);
  return out;
}

inline Bytes counting_bytes(std::size_t n, std::uint8_t first = 0) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(first + i);
  return b;
}

inline InitFrame sample_init() {
  InitFrame f;
  f.dev_id = make_dev_id("esp32-01");
  f.sessctr = 4660;
  f.t = 1700000000;
  f.dev_nonce = counting<DevNonce>(0x00);
  f.proof = counting<Proof>(0x10);
  return f;
}

inline AckFrame sample_ack() {
  AckFrame f;
  f.dev_id = make_dev_id("edge-test");
  f.sessctr = 65535;
  f.edge_nonce = counting<EdgeNonce>(0xa0);
  f.status = 0;
  f.proof = counting<Proof>(0xb0);
  return f;
}

inline DataFrame sample_data(Direction d = Direction::uplink, std::size_t payload = 5) {
  DataFrame f;
  f.direction = d;
  f.dev_id = make_dev_id("esp32-01");
  f.sessctr = 54321;
  f.seq = 7;
  f.sendts_ms = 1700000000123;
  f.has_iv = true;
  f.iv = counting<AeadNonce>(0xc0);
  const Bytes ct = payload == 5 ? Bytes{'h', 'e', 'l', 'l', 'o'} : counting_bytes(payload, 0x30);
  EXPECT_TRUE(f.ciphertext.assign(ct));
  f.tag = counting<AeadTag>(0xd0);
  return f;
}

inline PskFrame sample_psk(std::size_t payload = 3) {
  PskFrame f;
  f.dev_id = make_dev_id("esp32-01");
  f.seq = 42;
  f.sendts_ms = 0;
  f.iv = counting<AeadNonce>(0xe0);
  EXPECT_TRUE(f.ciphertext.assign(counting_bytes(payload, 1)));
  f.tag = counting<AeadTag>(0xf0);
  return f;
}

inline RekeyFrame sample_rekey() {
  RekeyFrame f;
  f.dev_id = make_dev_id("esp32-01");
  f.sessctr = 4660;
  f.seq = 4294967295u;
  f.proof = counting<Proof>(0x60);
  return f;
}

/// What a DATA frame looks like after a trip through `enc`: JSON carries the iv, compact does not.
inline DataFrame as_received(DataFrame f, Encoding enc) {
  f.has_iv = enc == Encoding::json;
  if (enc == Encoding::compact) f.iv = AeadNonce{};
  return f;
}

template <typename Frame>
Bytes encode_to_bytes(const Frame& f, Encoding enc) {
  Bytes buf(kMaxFrameSize + 256);
  std::size_t n = 0;
  const Error e = encode(f, enc, buf, n);
  EXPECT_EQ(e, Error::ok);
  buf.resize(e == Error::ok ? n : 0);
  return buf;
}

inline std::string as_string(const Bytes& b) {
  return std::string(b.begin(), b.end());
}
inline Bytes as_bytes(std::string_view s) {
  return Bytes(s.begin(), s.end());
}

// Uniform decode entry points, so templated tests can treat every frame kind alike.
inline Error decode_frame(ByteView w, InitFrame& out) {
  return decode_init(w, out);
}
inline Error decode_frame(ByteView w, AckFrame& out) {
  return decode_ack(w, out);
}
inline Error decode_frame(ByteView w, PskFrame& out) {
  return decode_psk(w, out);
}
inline Error decode_frame(ByteView w, RekeyFrame& out) {
  return decode_rekey(w, out);
}
inline Error decode_frame(ByteView w, DataFrame& out, Direction d = Direction::uplink) {
  return decode_data(w, d, out);
}

}  // namespace test
}  // namespace dsekp
