// The crypto backend interface: the only primitives DSEKP uses, and the randomness source.
//
// Two implementations exist: OpenSSL 3 (crypto/openssl, the edge) and mbedTLS 2.28 (crypto/mbedtls,
// the device, as on ESP32). Both pass the same known-answer suite (tests/crypto). The protocol core
// calls only this interface, so a device on one backend and an edge on the other interoperate.
//
// Why a virtual interface and not a template parameter: the core is compiled once and linked with
// either backend (and both at once in the cross-backend test); an indirect call costs a few ns
// against >= 100 ns for the cheapest primitive. Virtual calls need no RTTI, so the device build
// with -fno-rtti is unaffected.
//
// Contract for every method: noexcept, outputs zeroed when the result is not Error::ok, no
// plaintext left in the backend after it returns. Key material: for speed a backend may keep the
// most recent HMAC key state and AES key schedules in its library contexts between calls;
// forget_keys() overwrites all of it. The protocol core calls it when a handshake ends on either
// side (the device has handled an ACK, the edge has answered or refused an INIT), so handshake
// secrets (PRK, SS, K_init, K_ack, TS) do not outlive the handshake inside the backend either.
#pragma once

#include <span>

#include "dsekp/bytes.hpp"
#include "dsekp/error.hpp"
#include "dsekp/spec.hpp"

namespace dsekp {

class CryptoBackend {
 public:
  /// Short name for reports: "openssl" or "mbedtls".
  [[nodiscard]] virtual const char* name() const noexcept = 0;

  /// HMAC-SHA256(key, parts[0] || parts[1] || ...) into `out` (32 bytes). Any key length.
  virtual Error hmac_sha256(ByteView key, std::span<const ByteView> parts,
                            Sha256Digest& out) noexcept = 0;

  /// HKDF-Extract (RFC 5869 2.2): out = HMAC-SHA256(salt, ikm). Empty salt means 32 zero bytes.
  virtual Error hkdf_extract(ByteView salt, std::span<const ByteView> ikm_parts,
                             MutableByteView prk_out /*32 bytes*/) noexcept = 0;

  /// HKDF-Expand (RFC 5869 2.3): fills `okm` (1..255*32 bytes) from `prk` and info parts.
  virtual Error hkdf_expand(ByteView prk, std::span<const ByteView> info_parts,
                            MutableByteView okm) noexcept = 0;

  /// AES-128-GCM encryption, 96-bit nonce, 128-bit tag. `ciphertext.size()` must equal
  /// `plaintext.size()` (may alias it).
  virtual Error aes128_gcm_seal(ByteView key /*16*/, const AeadNonce& nonce, ByteView aad,
                                ByteView plaintext, MutableByteView ciphertext,
                                AeadTag& tag) noexcept = 0;

  /// Overwrites every key, key schedule and HMAC state the backend keeps between calls. The next
  /// call works as usual (it re-keys).
  virtual void forget_keys() noexcept = 0;

  /// AES-128-GCM decryption. Returns auth_failed (and zeroes `plaintext`) if the tag does not
  /// verify; no unauthenticated plaintext is ever left in `plaintext`.
  virtual Error aes128_gcm_open(ByteView key /*16*/, const AeadNonce& nonce, ByteView aad,
                                ByteView ciphertext, const AeadTag& tag,
                                MutableByteView plaintext) noexcept = 0;

 protected:
  // Protected and non-virtual: backends are owned by their concrete type, never deleted through
  // this interface, so no deleting destructor (and no operator delete) reaches the device build.
  CryptoBackend() = default;
  ~CryptoBackend() = default;
  CryptoBackend(const CryptoBackend&) = default;
  CryptoBackend& operator=(const CryptoBackend&) = default;
};

/// Source of random bytes. Production: the OS CSPRNG (backend-provided). Tests and fuzzing: the
/// seeded generator in crypto/testing. The core never reads the OS RNG by itself.
class Rng {
 public:
  virtual Error fill(MutableByteView out) noexcept = 0;

 protected:
  Rng() = default;
  ~Rng() = default;  // see ~CryptoBackend
  Rng(const Rng&) = default;
  Rng& operator=(const Rng&) = default;
};

}  // namespace dsekp
