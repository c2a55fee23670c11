// Sealing and opening DATA / downlink frames (see data_frame.hpp).
#include "data_frame.hpp"

#include <array>

namespace dsekp {
namespace {
constexpr std::size_t kMaxAadSize = kLabelDataAad.size() + 1 + kDevIdMaxSize + 2 + 4 + 8;
}  // namespace

Error seal_data_frame(CryptoBackend& crypto, const DirectionKeys& keys, Direction direction,
                      const DevId& dev_id, std::uint16_t sessctr, std::uint32_t seq,
                      std::uint64_t sendts_ms, ByteView plaintext, DataFrame& out) noexcept {
  if (plaintext.size() > kMaxPayloadSize) return Error::payload_too_large;
  std::array<std::uint8_t, kMaxAadSize> aad{};
  const std::size_t aad_size =
      build_data_aad(direction, dev_id, sessctr, seq, sendts_ms, MutableByteView(aad));

  out.direction = direction;
  out.dev_id = dev_id;
  out.sessctr = sessctr;
  out.seq = seq;
  out.sendts_ms = sendts_ms;
  out.iv = make_nonce(keys.iv_base, seq);
  out.has_iv = true;
  if (!out.ciphertext.resize(plaintext.size())) return Error::payload_too_large;
  return crypto.aes128_gcm_seal(keys.key.view(), out.iv, ByteView(aad.data(), aad_size), plaintext,
                                out.ciphertext.storage().first(plaintext.size()), out.tag);
}

Error open_data_frame(CryptoBackend& crypto, const DirectionKeys& keys, const DataFrame& frame,
                      MutableByteView plaintext, std::size_t& plaintext_size) noexcept {
  plaintext_size = 0;
  const std::size_t n = frame.ciphertext.size();
  if (plaintext.size() < n) return Error::buffer_too_small;
  const AeadNonce nonce = make_nonce(keys.iv_base, frame.seq);
  // The JSON profile carries the nonce (paper compatibility); it must be the one we derive.
  if (frame.has_iv && !frame.iv.equals(nonce)) return Error::nonce_mismatch;

  std::array<std::uint8_t, kMaxAadSize> aad{};
  const std::size_t aad_size = build_data_aad(frame.direction, frame.dev_id, frame.sessctr,
                                              frame.seq, frame.sendts_ms, MutableByteView(aad));
  Error e = crypto.aes128_gcm_open(keys.key.view(), nonce, ByteView(aad.data(), aad_size),
                                   frame.ciphertext.view(), frame.tag, plaintext.first(n));
  if (e == Error::ok) plaintext_size = n;
  return e;
}

}  // namespace dsekp
