// The paper's static-PSK baseline (see psk_baseline.hpp): kept weak on purpose, for comparison.
#include "dsekp/psk_baseline.hpp"

namespace dsekp {

Error psk_seal(CryptoBackend& crypto, const PskKey& key, const DevId& dev_id, std::uint32_t seq,
               std::uint64_t sendts_ms, ByteView plaintext, Rng& rng, PskFrame& out) noexcept {
  if (plaintext.size() > kMaxPayloadSize) return Error::payload_too_large;
  out.dev_id = dev_id;
  out.seq = seq;
  out.sendts_ms = sendts_ms;
  // Random 12-byte IV and no AAD, exactly as the paper's baseline.
  if (Error e = rng.fill(out.iv.mutable_view()); e != Error::ok) return e;
  if (!out.ciphertext.resize(plaintext.size())) return Error::payload_too_large;
  return crypto.aes128_gcm_seal(key.view(), out.iv, ByteView(), plaintext,
                                out.ciphertext.storage().first(plaintext.size()), out.tag);
}

Error psk_open(CryptoBackend& crypto, const PskKey& key, const PskFrame& frame,
               MutableByteView plaintext, std::size_t& plaintext_size) noexcept {
  plaintext_size = 0;
  const std::size_t n = frame.ciphertext.size();
  if (plaintext.size() < n) return Error::buffer_too_small;
  Error e = crypto.aes128_gcm_open(key.view(), frame.iv, ByteView(), frame.ciphertext.view(),
                                   frame.tag, plaintext.first(n));
  if (e == Error::ok) plaintext_size = n;
  return e;
}

}  // namespace dsekp
