// mbedTLS 2.28 implementation of the crypto backend (the device side, as shipped by ESP-IDF) and a
// CTR-DRBG random source. Compiled with the device flags (-fno-exceptions -fno-rtti).
//
// Why the object keeps long-lived contexts: mbedTLS 2.28's MD and GCM layers allocate their
// internal state with mbedtls_calloc when a context is set up (mbedtls_md_setup) or keyed
// (mbedtls_gcm_setkey re-creates its cipher context). So the HMAC context is set up once in the
// constructor, and the GCM context is re-keyed only when the key changes. A session then seals and
// opens without any allocation. (An MCU build points mbedtls_calloc at a static pool; that is a
// later issue, not handled here.)
//
// What stays in the object between calls: the keyed HMAC and GCM contexts (library state) and a
// copy of the last AES key, used only to detect a key change. For AES-128 that copy is no more
// than the library already keeps: round key 0 of the schedule is the key itself. The destructor
// frees and wipes all of it. An MbedtlsCrypto is not thread-safe; give each thread its own.
#pragma once

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/gcm.h>
#include <mbedtls/md.h>

#include <array>
#include <cstdint>

#include "dsekp/crypto.hpp"

namespace dsekp {

class MbedtlsCrypto final : public CryptoBackend {
 public:
  MbedtlsCrypto() noexcept;
  ~MbedtlsCrypto();
  MbedtlsCrypto(const MbedtlsCrypto&) = delete;
  MbedtlsCrypto& operator=(const MbedtlsCrypto&) = delete;

  /// False if the HMAC context could not be set up (out of memory). Every method of an object
  /// that is not ready returns Error::crypto_failure.
  [[nodiscard]] bool ready() const noexcept { return ready_; }

  [[nodiscard]] const char* name() const noexcept override { return "mbedtls"; }
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
  // Feeds prefix || parts... || suffix to the started HMAC and writes the MAC to out (32 bytes).
  bool hmac_finish(ByteView prefix, std::span<const ByteView> parts, ByteView suffix,
                   std::uint8_t* out) noexcept;
  // Installs `key` in the GCM context unless it is already the installed key.
  bool gcm_use_key(ByteView key) noexcept;

  mbedtls_md_context_t md_;
  mbedtls_gcm_context gcm_;
  std::array<std::uint8_t, kAeadKeySize> gcm_key_{};  // the key installed in gcm_
  bool gcm_keyed_ = false;                            // gcm_key_ is valid
  bool ready_ = false;
};

/// Random bytes from mbedTLS's CTR-DRBG (AES-256), seeded from mbedtls_entropy (the platform
/// source: getrandom or /dev/urandom on Linux, the hardware RNG on an ESP32).
class MbedtlsRng final : public Rng {
 public:
  MbedtlsRng() noexcept;
  ~MbedtlsRng();
  // The DRBG holds a pointer to the entropy context inside this object: not copyable or movable.
  MbedtlsRng(const MbedtlsRng&) = delete;
  MbedtlsRng& operator=(const MbedtlsRng&) = delete;

  /// False if seeding failed; fill() then returns Error::crypto_failure.
  [[nodiscard]] bool ready() const noexcept { return ready_; }

  Error fill(MutableByteView out) noexcept override;

 private:
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  bool ready_ = false;
};

}  // namespace dsekp
