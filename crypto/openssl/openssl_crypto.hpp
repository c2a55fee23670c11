// OpenSSL 3 implementation of the crypto backend (the edge side) and the OS-CSPRNG source.
//
// Why the object keeps state: in OpenSSL 3 every algorithm is looked up through providers, and
// fetching an algorithm or building a context costs more than hashing a 40-byte message
// (measured with OpenSSL 3.0: ~2.5 us for the one-shot HMAC() against ~0.9 us with a reused
// EVP_MAC context). So the constructor fetches HMAC and AES-128-GCM once, and every call reuses one
// MAC context and one of two cipher contexts. The two cipher contexts cache the two most recently
// used AES keys, so a session that alternates between its two directions' keys (open a request,
// seal the reply) never re-keys: a re-key (AES key expansion and GHASH table) cost ~160 ns per
// switch on top of a ~190 ns message (measured: alternating seal/open 350 ns per message with one
// cached key, 215 ns with two). Consequence: an OpenSslCrypto is not thread-safe; give each
// thread its own instance.
//
// When it allocates (counted with CRYPTO_set_mem_functions, OpenSSL 3.0.22): the constructor
// (fetches and contexts); every keyed HMAC computation, i.e. each hmac_sha256 and hkdf_extract call
// and each 32-byte block of hkdf_expand: EVP_MAC_init with a key makes 5 allocations in 3.0, one
// of them OpenSSL's copy of the key (the previous copy is cleansed and freed); forget_keys(), which
// computes one MAC under the dummy key (5 again). AES-GCM never allocates after construction, not
// even when it re-keys. The edge is not allocation-constrained; the device backend
// (mbedtls_crypto.hpp) is the one that avoids allocation.
//
// What stays in the object between calls: the keyed MAC context (ipad/opad states, OpenSSL's copy
// of the last HMAC key, the hash state of the last MAC), the two keyed cipher contexts (AES
// schedule, GHASH key) and a copy of each cached AES key, used only to skip re-keying when the
// same key comes again. For AES-128 that copy is no more than the library already keeps: round key
// 0 of the schedule is the key itself. forget_keys() and the destructor overwrite all of it
// (tests/crypto/openssl_key_residue_test.cpp searches OpenSSL's live memory for the keys).
#pragma once

#include <openssl/types.h>

#include <array>
#include <cstddef>
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
  /// Re-keys the MAC context with the all-zero key and computes one MAC with it (replacing the
  /// pads, OpenSSL's key copy and the hash state of the last MAC), re-keys both cipher contexts
  /// with the all-zero key (OpenSSL clears the whole GCM state when keying) and wipes the cached
  /// key copies. The next AES-GCM call re-keys with its real key.
  void forget_keys() noexcept override;

  /// Number of keyed cipher contexts kept.
  static constexpr std::size_t kGcmSlots = 2;

 private:
  // One cipher context (AES-128-GCM bound once) and the key it holds.
  struct GcmSlot {
    EVP_CIPHER_CTX* ctx = nullptr;
    std::array<std::uint8_t, kAeadKeySize> key{};  // the key installed in ctx
    bool keyed = false;                            // key is valid
  };

  // HMAC-SHA256(key, prefix || parts... || suffix) into out (32 bytes). The prefix and suffix
  // carry HKDF-Expand's T(i-1) and counter byte, so no input is ever concatenated into a buffer.
  bool hmac(ByteView key, ByteView prefix, std::span<const ByteView> parts, ByteView suffix,
            std::uint8_t* out) noexcept;
  // Prepares a cipher context for one message under `key` and `nonce`: the one that holds `key`,
  // or the least recently used one re-keyed. Null on failure.
  EVP_CIPHER_CTX* gcm_begin(bool encrypt, ByteView key, const AeadNonce& nonce) noexcept;
  // Binds AES-128-GCM to `ctx`; false on failure.
  bool bind_cipher(EVP_CIPHER_CTX* ctx) noexcept;
  // Creates a fresh MAC context with the digest set; false on failure.
  bool new_mac_context() noexcept;

  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* mac_ctx_ = nullptr;
  EVP_CIPHER* gcm_ = nullptr;
  std::array<GcmSlot, kGcmSlots> gcm_slots_;
  std::size_t gcm_recent_ = 0;  // index of the slot used most recently
  bool ready_ = false;
};

/// Random bytes from OpenSSL's default DRBG (RAND_bytes), which OpenSSL seeds from the OS.
class OpenSslRng final : public Rng {
 public:
  Error fill(MutableByteView out) noexcept override;
};

}  // namespace dsekp
