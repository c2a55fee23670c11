// OpenSSL 3 backend: HMAC-SHA256 and HKDF over a reused EVP_MAC context, AES-128-GCM over two
// reused EVP_CIPHER_CTXs caching the two most recent keys, randomness from RAND_bytes. See
// openssl_crypto.hpp for why state is kept.
#include "crypto/openssl/openssl_crypto.hpp"

#include "crypto/argument_rules.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>

namespace dsekp {
namespace {

// HMAC pads its key with zeros to the block size, so an empty key and 32 zero bytes give the same
// MAC; RFC 5869 2.2 defines the empty salt as exactly that. EVP_MAC_init treats a null key as
// "no new key", and an empty span may have a null data(), so empty keys are replaced by this.
// forget_keys() installs it (its first 16 bytes for AES) as the dummy key.
constexpr std::array<std::uint8_t, kHashSize> kZeroKey{};
static_assert(kAeadKeySize <= kHashSize);

bool fits_int(std::size_t n) noexcept {
  return n <= static_cast<std::size_t>(INT_MAX);
}

}  // namespace

OpenSslCrypto::OpenSslCrypto() noexcept {
  mac_ = EVP_MAC_fetch(nullptr, OSSL_MAC_NAME_HMAC, nullptr);
  gcm_ = EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr);
  if (mac_ == nullptr || gcm_ == nullptr || !new_mac_context()) return;
  for (GcmSlot& slot : gcm_slots_) {
    slot.ctx = EVP_CIPHER_CTX_new();
    if (slot.ctx == nullptr || !bind_cipher(slot.ctx)) return;
  }
  ready_ = true;
}

OpenSslCrypto::~OpenSslCrypto() {
  for (GcmSlot& slot : gcm_slots_) {
    EVP_CIPHER_CTX_free(slot.ctx);  // cleanses the key schedule
    OPENSSL_cleanse(slot.key.data(), slot.key.size());
  }
  EVP_CIPHER_free(gcm_);
  EVP_MAC_CTX_free(mac_ctx_);  // cleanses the keyed HMAC state
  EVP_MAC_free(mac_);
}

bool OpenSslCrypto::new_mac_context() noexcept {
  mac_ctx_ = EVP_MAC_CTX_new(mac_);
  if (mac_ctx_ == nullptr) return false;
  // The digest is set once: the per-call EVP_MAC_init then only installs the key.
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  return EVP_MAC_CTX_set_params(mac_ctx_, params) == 1;
}

bool OpenSslCrypto::bind_cipher(EVP_CIPHER_CTX* ctx) noexcept {
  // Binding the cipher here lets every later init pass a null cipher. Passing the cipher again
  // would make OpenSSL free and re-create the provider context on every message.
  return EVP_CipherInit_ex2(ctx, gcm_, nullptr, nullptr, 1, nullptr) == 1;
}

void OpenSslCrypto::forget_keys() noexcept {
  if (!ready_) return;  // a backend that is not ready keys nothing
  // Keying a GCM context clears its whole GCM state (CRYPTO_gcm128_init starts with a memset)
  // before deriving the new GHASH key, and overwrites the AES schedule: so the zero key replaces
  // everything the last real key left. If that ever failed, resetting the context frees and
  // cleanses the provider state, and the cipher is bound again.
  for (GcmSlot& slot : gcm_slots_) {
    OPENSSL_cleanse(slot.key.data(), slot.key.size());
    slot.keyed = false;
    if (EVP_CipherInit_ex2(slot.ctx, nullptr, kZeroKey.data(), nullptr, 1, nullptr) != 1) {
      EVP_CIPHER_CTX_reset(slot.ctx);
      if (!bind_cipher(slot.ctx)) ready_ = false;
    }
  }
  // Re-keying replaces the ipad/opad states and OpenSSL's copy of the key (freed with a cleanse).
  // The working hash state still holds the last MAC (for hkdf_expand: the last output block, i.e.
  // key material); OpenSSL 3.0 replaces it when re-keying, and finishing one MAC under the dummy
  // key makes sure of it whatever the version. If that ever failed, freeing the context cleanses
  // all of it, and a fresh one is made. tests/crypto/openssl_key_residue_test.cpp checks the
  // result.
  std::array<std::uint8_t, kHashSize> scratch{};
  if (!hmac(kZeroKey, {}, {}, {}, scratch.data())) {
    EVP_MAC_CTX_free(mac_ctx_);
    if (!new_mac_context()) ready_ = false;
  }
}

bool OpenSslCrypto::hmac(ByteView key, ByteView prefix, std::span<const ByteView> parts,
                         ByteView suffix, std::uint8_t* out) noexcept {
  if (key.empty()) key = ByteView(kZeroKey);
  if (EVP_MAC_init(mac_ctx_, key.data(), key.size(), nullptr) != 1) return false;
  auto update = [this](ByteView bytes) {
    return bytes.empty() || EVP_MAC_update(mac_ctx_, bytes.data(), bytes.size()) == 1;
  };
  if (!update(prefix)) return false;
  for (ByteView part : parts) {
    if (!update(part)) return false;
  }
  if (!update(suffix)) return false;
  std::size_t written = 0;
  return EVP_MAC_final(mac_ctx_, out, &written, kHashSize) == 1 && written == kHashSize;
}

Error OpenSslCrypto::hmac_sha256(ByteView key, std::span<const ByteView> parts,
                                 Sha256Digest& out) noexcept {
  if (ready_ && hmac(key, {}, parts, {}, out.data())) return Error::ok;
  secure_wipe(out.mutable_view());
  return Error::crypto_failure;
}

Error OpenSslCrypto::hkdf_extract(ByteView salt, std::span<const ByteView> ikm_parts,
                                  MutableByteView prk_out) noexcept {
  if (prk_out.size() != kHashSize) {
    secure_wipe(prk_out);
    return Error::invalid_argument;
  }
  // Why not EVP_KDF "HKDF": in OpenSSL 3.0 each derivation through it costs several us (context
  // creation, parameter parsing, an internal MAC fetch), against one HMAC here. HKDF-Extract is
  // by definition PRK = HMAC-Hash(salt, IKM), so the library's HMAC on the reused context suffices.
  if (ready_ && hmac(salt, {}, ikm_parts, {}, prk_out.data())) return Error::ok;
  secure_wipe(prk_out);
  return Error::crypto_failure;
}

Error OpenSslCrypto::hkdf_expand(ByteView prk, std::span<const ByteView> info_parts,
                                 MutableByteView okm) noexcept {
  // A PRK shorter than HashLen is outside RFC 5869 2.3 (and mbedTLS refuses it): refuse it here too
  // so both backends agree. Output that overlaps an input would overwrite it between blocks.
  if (!crypto_rules::hkdf_expand_arguments_ok(prk, info_parts, okm)) {
    secure_wipe(okm);
    return Error::invalid_argument;
  }
  if (!ready_) {
    secure_wipe(okm);
    return Error::crypto_failure;
  }
  // RFC 5869 2.3: T(i) = HMAC-Hash(PRK, T(i-1) || info || i), T(0) empty, OKM = first L bytes of
  // T(1) || T(2) || ... Built on the library's HMAC for the same reason as hkdf_extract above.
  std::array<std::uint8_t, kHashSize> block{};
  std::size_t previous = 0;  // length of T(i-1): 0 for i = 1
  std::uint8_t counter = 1;
  for (std::size_t offset = 0; offset < okm.size(); ++counter) {
    const ByteView counter_byte(&counter, 1);
    if (!hmac(prk, ByteView(block.data(), previous), info_parts, counter_byte, block.data())) {
      OPENSSL_cleanse(block.data(), block.size());
      secure_wipe(okm);
      return Error::crypto_failure;
    }
    const std::size_t n = std::min(kHashSize, okm.size() - offset);
    std::memcpy(okm.data() + offset, block.data(), n);
    offset += n;
    previous = kHashSize;
  }
  OPENSSL_cleanse(block.data(), block.size());
  return Error::ok;
}

EVP_CIPHER_CTX* OpenSslCrypto::gcm_begin(bool encrypt, ByteView key,
                                         const AeadNonce& nonce) noexcept {
  // Re-keying costs an AES key expansion plus the GHASH key setup; a session seals and opens many
  // messages under its two keys, so the schedules of the two most recent keys are kept. The
  // comparisons are constant-time because both operands are secret: the time shows at most which
  // cached key, if any, was equal, never how much of a key matched.
  static_assert(kGcmSlots == 2, "the replacement rule below assumes two slots");
  // The most recently used slot is tried first, so a run of messages under one key costs one
  // comparison, as with a single cached key.
  const std::size_t recent = gcm_recent_, other = 1 - gcm_recent_;
  std::size_t hit = kGcmSlots;
  if (gcm_slots_[recent].keyed && constant_time_equal(key, ByteView(gcm_slots_[recent].key))) {
    hit = recent;
  } else if (gcm_slots_[other].keyed && constant_time_equal(key, ByteView(gcm_slots_[other].key))) {
    hit = other;
  }
  const bool cached = hit != kGcmSlots;
  // Miss: an unused slot if there is one, else the least recently used (of two: not the recent).
  if (!cached) hit = !gcm_slots_[0].keyed ? 0 : !gcm_slots_[1].keyed ? 1 : other;
  GcmSlot& slot = gcm_slots_[hit];
  slot.keyed = false;  // until the init below has succeeded
  const unsigned char* new_key = cached ? nullptr : key.data();
  if (EVP_CipherInit_ex2(slot.ctx, nullptr, new_key, nonce.data(), encrypt ? 1 : 0, nullptr) != 1) {
    OPENSSL_cleanse(slot.key.data(), slot.key.size());
    return nullptr;
  }
  if (!cached) std::memcpy(slot.key.data(), key.data(), slot.key.size());
  slot.keyed = true;
  gcm_recent_ = hit;
  return slot.ctx;
}

Error OpenSslCrypto::aes128_gcm_seal(ByteView key, const AeadNonce& nonce, ByteView aad,
                                     ByteView plaintext, MutableByteView ciphertext,
                                     AeadTag& tag) noexcept {
  auto fail = [&](Error e) {
    secure_wipe(ciphertext);
    secure_wipe(tag.mutable_view());
    return e;
  };
  if (!crypto_rules::gcm_arguments_ok(key, plaintext, ciphertext) || !fits_int(plaintext.size()) ||
      !fits_int(aad.size())) {
    return fail(Error::invalid_argument);
  }
  EVP_CIPHER_CTX* ctx = ready_ ? gcm_begin(true, key, nonce) : nullptr;
  if (ctx == nullptr) return fail(Error::crypto_failure);

  int written = 0;
  // A null output marks the input as AAD.
  if (!aad.empty() &&
      EVP_EncryptUpdate(ctx, nullptr, &written, aad.data(), static_cast<int>(aad.size())) != 1) {
    return fail(Error::crypto_failure);
  }
  if (!plaintext.empty()) {
    const int n = static_cast<int>(plaintext.size());
    if (EVP_EncryptUpdate(ctx, ciphertext.data(), &written, plaintext.data(), n) != 1 ||
        written != n) {
      return fail(Error::crypto_failure);
    }
  }
  std::uint8_t none[16];  // GCM's final step writes no bytes; OpenSSL still wants a buffer
  if (EVP_EncryptFinal_ex(ctx, none, &written) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(kTagSize), tag.data()) !=
          1) {
    return fail(Error::crypto_failure);
  }
  return Error::ok;
}

Error OpenSslCrypto::aes128_gcm_open(ByteView key, const AeadNonce& nonce, ByteView aad,
                                     ByteView ciphertext, const AeadTag& tag,
                                     MutableByteView plaintext) noexcept {
  auto fail = [&](Error e) {
    secure_wipe(plaintext);
    return e;
  };
  if (!crypto_rules::gcm_arguments_ok(key, ciphertext, plaintext) || !fits_int(ciphertext.size()) ||
      !fits_int(aad.size())) {
    return fail(Error::invalid_argument);
  }
  EVP_CIPHER_CTX* ctx = ready_ ? gcm_begin(false, key, nonce) : nullptr;
  if (ctx == nullptr) return fail(Error::crypto_failure);

  // The ctrl takes a non-const pointer; the tag is public, so a local copy is simplest.
  AeadTag expected = tag;
  int written = 0;
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, static_cast<int>(kTagSize),
                          expected.data()) != 1) {
    return fail(Error::crypto_failure);
  }
  if (!aad.empty() &&
      EVP_DecryptUpdate(ctx, nullptr, &written, aad.data(), static_cast<int>(aad.size())) != 1) {
    return fail(Error::crypto_failure);
  }
  if (!ciphertext.empty()) {
    const int n = static_cast<int>(ciphertext.size());
    if (EVP_DecryptUpdate(ctx, plaintext.data(), &written, ciphertext.data(), n) != 1 ||
        written != n) {
      return fail(Error::crypto_failure);
    }
  }
  // OpenSSL has already written the unauthenticated plaintext; it is zeroed unless the tag holds.
  std::uint8_t none[16];
  if (EVP_DecryptFinal_ex(ctx, none, &written) != 1) return fail(Error::auth_failed);
  return Error::ok;
}

Error OpenSslRng::fill(MutableByteView out) noexcept {
  // RAND_bytes takes an int length, so very large requests go in chunks.
  for (std::size_t offset = 0; offset < out.size();) {
    const std::size_t n = std::min(out.size() - offset, static_cast<std::size_t>(INT_MAX));
    if (RAND_bytes(out.data() + offset, static_cast<int>(n)) != 1) {
      secure_wipe(out);
      return Error::crypto_failure;
    }
    offset += n;
  }
  return Error::ok;
}

}  // namespace dsekp
