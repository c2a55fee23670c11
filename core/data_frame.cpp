// Sealing and opening DATA / downlink frames (see data_frame.hpp).
#include "data_frame.hpp"

#include <array>

namespace dsekp {
namespace {
constexpr std::size_t kMaxAadSize = kLabelDataAad.size() + 1 + kDevIdMaxSize + 2 + 4 + 8;
}  // namespace

Error seal_data_frame(CryptoBackend& crypto, const DirectionKeys& keys,
                      const DataHeaderFields& header, ByteView plaintext,
                      MutableByteView ciphertext, DataFrameView& out) noexcept {
  out.ciphertext = ByteView();
  if (plaintext.size() > kMaxPayloadSize) return Error::payload_too_large;
  if (ciphertext.size() < plaintext.size()) return Error::buffer_too_small;
  std::array<std::uint8_t, kMaxAadSize> aad{};
  const std::size_t aad_size = build_data_aad(header.direction, header.dev_id, header.sessctr,
                                              header.seq, header.sendts_ms, MutableByteView(aad));
  out.direction = header.direction;
  out.dev_id = header.dev_id;
  out.sessctr = header.sessctr;
  out.seq = header.seq;
  out.sendts_ms = header.sendts_ms;
  out.iv = make_nonce(keys.iv_base, header.seq);
  out.has_iv = true;
  const MutableByteView sealed = ciphertext.first(plaintext.size());
  const Error e = crypto.aes128_gcm_seal(keys.key.view(), out.iv, ByteView(aad.data(), aad_size),
                                         plaintext, sealed, out.tag);
  if (e == Error::ok) out.ciphertext = sealed;
  return e;
}

Error seal_data_frame(CryptoBackend& crypto, const DirectionKeys& keys,
                      const DataHeaderFields& header, ByteView plaintext, DataFrame& out) noexcept {
  return fill_data_frame(out, [&](MutableByteView storage, DataFrameView& view) {
    return seal_data_frame(crypto, keys, header, plaintext, storage, view);
  });
}

template <typename Frame>
Error open_data_frame(CryptoBackend& crypto, const DirectionKeys& keys, const Frame& frame,
                      MutableByteView plaintext, std::size_t& plaintext_size) noexcept {
  plaintext_size = 0;
  const ByteView ciphertext = ciphertext_of(frame);
  const std::size_t n = ciphertext.size();
  if (plaintext.size() < n) return Error::buffer_too_small;
  const AeadNonce nonce = make_nonce(keys.iv_base, frame.seq);
  // The JSON profile carries the nonce (paper compatibility); it must be the one we derive.
  if (frame.has_iv && !frame.iv.equals(nonce)) return Error::nonce_mismatch;
  std::array<std::uint8_t, kMaxAadSize> aad{};
  const std::size_t aad_size = build_data_aad(frame.direction, frame.dev_id, frame.sessctr,
                                              frame.seq, frame.sendts_ms, MutableByteView(aad));
  Error e = crypto.aes128_gcm_open(keys.key.view(), nonce, ByteView(aad.data(), aad_size),
                                   ciphertext, frame.tag, plaintext.first(n));
  if (e == Error::ok) plaintext_size = n;
  return e;
}

template Error open_data_frame(CryptoBackend&, const DirectionKeys&, const DataFrame&,
                               MutableByteView, std::size_t&) noexcept;
template Error open_data_frame(CryptoBackend&, const DirectionKeys&, const DataFrameView&,
                               MutableByteView, std::size_t&) noexcept;

}  // namespace dsekp
