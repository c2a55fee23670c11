// OpenSSL 3 implementation of the crypto backend (the edge side) and the OS-CSPRNG source.
//
// Why the object keeps state: in OpenSSL 3 every algorithm is looked up through providers, and
// fetching an algorithm or building a context costs more than hashing a 40-byte message
// (measured with OpenSSL 3.0: ~2.5 us for the one-shot HMAC() against ~0.9 us with a reused
// EVP_MAC context). So the constructor fetches HMAC and AES-128-GCM once, and every call reuses one
// MAC context and one cipher context. Consequence: an OpenSslCrypto is not thread-safe; give each
// thread its own instance.
//
// What stays in the object between calls: the keyed MAC and cipher contexts (library state) and a
// copy of the last AES key, used only to skip re-keying when the same key comes again. For
// AES-128 that copy is no more than the library already keeps: round key 0 of the schedule is the
// key itself. The destructor frees and wipes all of it.
#pragma once

#include <openssl/types.h>

#include <array>
#include <cstdint>

#include "dsekp/crypto.hpp"

namespace dsekp {

class OpenSslCrypto final : public CryptoBackend {
 public:
  OpenSslCrypto() noexcept;
  ~OpenSslCrypto();
  OpenSslCrypto(const OpenSslCrypto&) = delete;
  OpenSslCrypto& operator=(const OpenSslCrypto&) = delete;

  /// False if OpenSSL could not provide HMAC-SHA256 or AES-128-GCM (a provider is missing or out
  /// of memory). Every method of an object that is not ready returns Error::crypto_failure.
  [[nodiscard]] bool ready() const noexcept { return ready_; }

  [[nodiscard]] const char* name() const noexcept override { return "openssl"; }
  Error hmac_sha256(ByteView key, std::span<const ByteView> parts,
                    Sha256Digest& out) noexcept override;
  Error hkdf_extract(ByteView salt, std::span<const ByteView> ikm_parts,
                     MutableByteView prk_out) noexcept override;
  Error hkdf_expand(ByteView prk, std::span<const ByteView> info_parts,
                    MutableByteView okm) noexcept override;
  Error aes128_gcm_seal(ByteView key, const AeadNonce& nonce, ByteView aad, ByteView plaintext,
                        MutableByteView ciphertext, AeadTag& tag) noexcept override;
  Error aes128_gcm_open(ByteView key, const AeadNonce& nonce, ByteView aad, ByteView ciphertext,
                        const AeadTag& tag, MutableByteView plaintext) noexcept override;

 private:
  // HMAC-SHA256(key, prefix || parts... || suffix) into out (32 bytes). The prefix and suffix
  // carry HKDF-Expand's T(i-1) and counter byte, so no input is ever concatenated into a buffer.
  bool hmac(ByteView key, ByteView prefix, std::span<const ByteView> parts, ByteView suffix,
            std::uint8_t* out) noexcept;
  // Prepares the cipher context for one message under `key` and `nonce`.
  bool gcm_begin(bool encrypt, ByteView key, const AeadNonce& nonce) noexcept;

  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* mac_ctx_ = nullptr;
  EVP_CIPHER* gcm_ = nullptr;
  EVP_CIPHER_CTX* gcm_ctx_ = nullptr;
  std::array<std::uint8_t, kAeadKeySize> gcm_key_{};  // the key installed in gcm_ctx_
  bool gcm_keyed_ = false;                            // gcm_key_ is valid
  bool ready_ = false;
};

/// Random bytes from OpenSSL's default DRBG (RAND_bytes), which OpenSSL seeds from the OS.
class OpenSslRng final : public Rng {
 public:
  Error fill(MutableByteView out) noexcept override;
};

}  // namespace dsekp
