// Strict canonical base64 on top of mbedTLS's encoder and decoder (see base64.hpp for why).
#include "base64.hpp"

#include <mbedtls/base64.h>

#include <cstring>

namespace dsekp::base64 {
namespace {

// mbedtls_base64_encode always appends a NUL terminator, so it cannot write an exact-size
// encoding into the caller's buffer. Encode through this stack buffer instead, in chunks that are
// a multiple of 3 bytes so that only the last chunk carries padding.
constexpr std::size_t kChunkBytes = 48;
constexpr std::size_t kChunkChars = encoded_size(kChunkBytes) + 1;  // + NUL terminator

// Encodes `in` chunk by chunk and hands each piece of text to `sink(const char*, size_t)`, which
// returns false to stop early.
template <typename Sink>
bool encode_chunks(ByteView in, Sink&& sink) noexcept {
  char chunk[kChunkChars];
  for (std::size_t pos = 0; pos < in.size(); pos += kChunkBytes) {
    const std::size_t n = in.size() - pos < kChunkBytes ? in.size() - pos : kChunkBytes;
    std::size_t olen = 0;
    if (mbedtls_base64_encode(reinterpret_cast<unsigned char*>(chunk), sizeof chunk, &olen,
                              in.data() + pos, n) != 0) {
      return false;  // cannot happen: the chunk buffer is sized for kChunkBytes
    }
    if (!sink(chunk, olen)) return false;
  }
  return true;
}

// mbedTLS's decoder tolerates spaces and line breaks (PEM style); the wire format does not.
bool has_whitespace(std::string_view text) noexcept {
  for (const char c : text) {
    if (c == ' ' || c == '\r' || c == '\n' || c == '\t') return true;
  }
  return false;
}

}  // namespace

Error encode(ByteView in, std::span<char> out, std::size_t& written) noexcept {
  written = 0;
  const std::size_t need = encoded_size(in.size());
  if (out.size() < need) return Error::buffer_too_small;
  std::size_t pos = 0;
  const bool ok = encode_chunks(in, [&](const char* text, std::size_t n) {
    std::memcpy(out.data() + pos, text, n);
    pos += n;
    return true;
  });
  if (!ok || pos != need) return Error::buffer_too_small;
  written = pos;
  return Error::ok;
}

Error decode(std::string_view text, MutableByteView out, std::size_t& written) noexcept {
  written = 0;
  // Padding is mandatory, so canonical text always comes in whole 4-character groups. With no
  // whitespace either, mbedTLS's size computation below is exact rather than an upper bound.
  if (text.size() % 4 != 0 || has_whitespace(text)) return Error::bad_base64;
  const auto* src = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t olen = 0;
  // mbedTLS validates every character before it looks at the destination size, so an invalid
  // string is reported as such even when it would also be too long.
  const int rc = mbedtls_base64_decode(out.data(), out.size(), &olen, src, text.size());
  if (rc == MBEDTLS_ERR_BASE64_BUFFER_TOO_SMALL) return Error::buffer_too_small;
  if (rc != 0) return Error::bad_base64;
  // mbedTLS ignores non-zero unused bits in the last group ("QR==" decodes like "QQ=="). Encoding
  // the result again and comparing catches that and any other non-canonical spelling.
  std::size_t pos = 0;
  const bool same =
      encode_chunks(ByteView(out.data(), olen), [&](const char* chunk, std::size_t n) {
        if (n > text.size() - pos || std::memcmp(text.data() + pos, chunk, n) != 0) return false;
        pos += n;
        return true;
      });
  if (!same || pos != text.size()) return Error::bad_base64;
  written = olen;
  return Error::ok;
}

}  // namespace dsekp::base64
