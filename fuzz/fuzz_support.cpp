// Shared fuzz harness code (see fuzz_support.hpp).
#include "fuzz_support.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>

namespace dsekp::fuzz {
namespace {

bool same_bytes(ByteView a, ByteView b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

template <typename Frame>
Bytes encode_frame(const Frame& frame, Encoding enc) {
  // Twice the frame cap: a frame decoded from the other encoding may grow (base64), and the
  // decoder, not the size of this buffer, must be what refuses an oversized frame.
  Bytes out(2 * kMaxFrameSize);
  std::size_t n = 0;
  const Error e = encode(frame, enc, MutableByteView(out), n);
  check(e == Error::ok, "encoder refuses a decoded frame", error_name(e));
  out.resize(n);
  return out;
}

}  // namespace

std::uint64_t input_seed(ByteView input) noexcept {
  // libstdc++'s std::hash of a string is a fixed function (MurmurHash2 with a fixed seed).
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(input.data()), input.size()));
}

void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "\n==== DSEKP fuzz property violated: %s\n", what);
  if (!detail.empty()) std::fprintf(stderr, "==== %s\n", detail.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string printable(ByteView bytes) {
  std::string out;
  for (const std::uint8_t c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

bool same(const InitFrame& a, const InitFrame& b) {
  return a.dev_id == b.dev_id && a.sessctr == b.sessctr && a.t == b.t &&
         a.dev_nonce.equals(b.dev_nonce) && a.proof.equals(b.proof);
}

bool same(const AckFrame& a, const AckFrame& b) {
  return a.dev_id == b.dev_id && a.sessctr == b.sessctr && a.edge_nonce.equals(b.edge_nonce) &&
         a.status == b.status && a.proof.equals(b.proof);
}

bool same(const DataFrame& a, const DataFrame& b, bool compare_iv) {
  if (compare_iv && (a.has_iv != b.has_iv || !a.iv.equals(b.iv))) return false;
  return a.direction == b.direction && a.dev_id == b.dev_id && a.sessctr == b.sessctr &&
         a.seq == b.seq && a.sendts_ms == b.sendts_ms &&
         same_bytes(a.ciphertext.view(), b.ciphertext.view()) && a.tag.equals(b.tag);
}

bool same(const PskFrame& a, const PskFrame& b) {
  return a.dev_id == b.dev_id && a.seq == b.seq && a.sendts_ms == b.sendts_ms &&
         a.iv.equals(b.iv) && same_bytes(a.ciphertext.view(), b.ciphertext.view()) &&
         a.tag.equals(b.tag);
}

Bytes encode_or_fail(const InitFrame& frame, Encoding enc) {
  return encode_frame(frame, enc);
}
Bytes encode_or_fail(const AckFrame& frame, Encoding enc) {
  return encode_frame(frame, enc);
}
Bytes encode_or_fail(const DataFrame& frame, Encoding enc) {
  return encode_frame(frame, enc);
}
Bytes encode_or_fail(const PskFrame& frame, Encoding enc) {
  return encode_frame(frame, enc);
}
Bytes encode_or_fail(const RekeyFrame& frame, Encoding enc) {
  return encode_frame(frame, enc);
}

}  // namespace dsekp::fuzz
