// mbedTLS 2.28 implementation of the crypto backend (the device side, as shipped by ESP-IDF) and a
// CTR-DRBG random source. Compiled with the device flags (-fno-exceptions -fno-rtti).
//
// Why the object keeps long-lived contexts: mbedTLS 2.28's MD and GCM layers allocate their
// internal state with mbedtls_calloc when a context is set up (mbedtls_md_setup) or keyed
// (mbedtls_gcm_setkey frees and re-creates its AES context). So the HMAC context is set up once in
// the constructor, and one keyed GCM context is kept for the most recent key: a device seals
// every uplink frame under one key, so only a downlink (opened under the other key) re-keys, once
// on the way in and once on the way back. One context rather than two saves a GCM context and an
// AES context (about 690 bytes on a 32-bit MCU) for two re-keys per downlink (about 4,800
// instructions each on Cortex-M4; docs/FIRMWARE.md).
//
// When an MbedtlsCrypto allocates (mbedtls_calloc; nothing else in this file allocates):
//  - the constructor: mbedtls_md_setup, two blocks (the SHA-256 context and ipad||opad);
//  - an AES-GCM call under another key than the cached one: mbedtls_gcm_setkey frees the AES
//    state of the context, if it has one, and allocates a new one (one calloc of an
//    mbedtls_aes_context). That is the first use of a key, every change of key, and the first use
//    of a key after forget_keys();
//  - nothing else: HMAC, HKDF and AES-GCM under a cached key never allocate, and forget_keys()
//    itself only frees (the AES states of the keyed contexts).
// tests/crypto/mbedtls_allocation_test.cpp counts these. (An MCU build points mbedtls_calloc at a
// static pool: firmware/src/dsekp_mbedtls_pool.c.)
//
// What stays in the object between calls: the keyed HMAC context (ipad||opad of the last HMAC
// key, and the hash state of the last MAC computed), the keyed GCM context (AES schedule, GHASH
// key tables) and a copy of its AES key, used only to tell whether a call needs a re-key.
// For AES-128 that copy is no more than the library already keeps: round key 0 of the schedule is
// the key itself. forget_keys() and the destructor overwrite all of it (checked through the
// public mbedTLS structs by tests/crypto/key_state_test.cpp). An MbedtlsCrypto is not thread-safe;
// give each thread its own.
#pragma once

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/gcm.h>
#include <mbedtls/md.h>

#include <array>
#include <cstddef>
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
  /// Re-keys the HMAC context with the all-zero key and computes one MAC with it (so neither the
  /// pads of the last key nor the last MAC stay in the hash state), frees and zeroizes the GCM
  /// context and wipes the cached key copy. Frees, never allocates; the next AES-GCM call
  /// re-keys (and allocates, see above).
  void forget_keys() noexcept override;

  /// Read-only views of the library contexts, for the tests that check what forget_keys() leaves
  /// behind. Not part of the CryptoBackend interface.
  [[nodiscard]] const mbedtls_md_context_t& hmac_context_for_tests() const noexcept { return md_; }
  [[nodiscard]] const mbedtls_gcm_context& gcm_context_for_tests() const noexcept {
    return gcm_.ctx;
  }

 private:
  // One keyed GCM context and the key it holds.
  struct GcmSlot {
    mbedtls_gcm_context ctx;
    std::array<std::uint8_t, kAeadKeySize> key{};  // the key installed in ctx
    bool keyed = false;                            // key is valid
  };

  // Feeds prefix || parts... || suffix to the started HMAC and writes the MAC to out (32 bytes).
  bool hmac_finish(ByteView prefix, std::span<const ByteView> parts, ByteView suffix,
                   std::uint8_t* out) noexcept;
  // The GCM context keyed with `key`, re-keyed unless it already was. Null if re-keying failed.
  mbedtls_gcm_context* gcm_for_key(ByteView key) noexcept;

  mbedtls_md_context_t md_;
  GcmSlot gcm_;
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
