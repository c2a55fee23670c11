// mbedTLS 2.28 backend: HMAC-SHA256 and HKDF over one long-lived MD context, AES-128-GCM over one
// GCM context that caches the most recently used key, CTR-DRBG randomness. See
// mbedtls_crypto.hpp for why.
#include "crypto/mbedtls/mbedtls_crypto.hpp"

#include "crypto/argument_rules.hpp"

#include <mbedtls/platform_util.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace dsekp {
namespace {

// RFC 5869 2.2: an empty salt means HashLen zero bytes. Also the dummy key forget_keys() installs
// in the HMAC context.
constexpr std::array<std::uint8_t, kHashSize> kZeroKey{};

// Personalisation string of the DRBG (NIST SP 800-90A): separates this use from any other DRBG
// instance seeded from the same entropy source.
constexpr char kDrbgPersonalisation[] = "DSEKP1 device rng";

}  // namespace

MbedtlsCrypto::MbedtlsCrypto() noexcept {
  mbedtls_md_init(&md_);
  mbedtls_gcm_init(&gcm_.ctx);
  const mbedtls_md_info_t* sha256 = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
  ready_ = sha256 != nullptr && mbedtls_md_setup(&md_, sha256, /*hmac=*/1) == 0;
}

MbedtlsCrypto::~MbedtlsCrypto() {
  mbedtls_gcm_free(&gcm_.ctx);  // zeroizes the key schedule and GHASH key
  mbedtls_platform_zeroize(gcm_.key.data(), gcm_.key.size());
  mbedtls_md_free(&md_);  // zeroizes the HMAC pads and the hash state
}

void MbedtlsCrypto::forget_keys() noexcept {
  // mbedtls_gcm_free frees the AES state (mbedtls_cipher_free zeroizes it first) and zeroizes the
  // rest of the context: GHASH tables, counter and tag state. gcm_init leaves it ready for setkey.
  mbedtls_gcm_free(&gcm_.ctx);
  mbedtls_gcm_init(&gcm_.ctx);
  mbedtls_platform_zeroize(gcm_.key.data(), gcm_.key.size());
  gcm_.keyed = false;
  if (!ready_) return;
  // Re-keying replaces ipad||opad with those of the zero key. Finishing one MAC as well overwrites
  // the SHA-256 state and block buffer, which still hold the last MAC (for hkdf_expand: the last
  // output block, i.e. key material) and the last inner hash. Four SHA-256 blocks in all.
  std::array<std::uint8_t, kHashSize> scratch{};
  if (mbedtls_md_hmac_starts(&md_, kZeroKey.data(), kZeroKey.size()) == 0 &&
      mbedtls_md_hmac_finish(&md_, scratch.data()) == 0) {
    return;
  }
  // Not reached with the software SHA-256. If it were, freeing the context still zeroizes it;
  // setting it up again allocates, and a failure there leaves the object not ready.
  mbedtls_md_free(&md_);
  mbedtls_md_init(&md_);
  const mbedtls_md_info_t* sha256 = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
  ready_ = sha256 != nullptr && mbedtls_md_setup(&md_, sha256, /*hmac=*/1) == 0;
}

bool MbedtlsCrypto::hmac_finish(ByteView prefix, std::span<const ByteView> parts, ByteView suffix,
                                std::uint8_t* out) noexcept {
  auto update = [this](ByteView bytes) {
    return bytes.empty() || mbedtls_md_hmac_update(&md_, bytes.data(), bytes.size()) == 0;
  };
  if (!update(prefix)) return false;
  for (ByteView part : parts) {
    if (!update(part)) return false;
  }
  return update(suffix) && mbedtls_md_hmac_finish(&md_, out) == 0;
}

Error MbedtlsCrypto::hmac_sha256(ByteView key, std::span<const ByteView> parts,
                                 Sha256Digest& out) noexcept {
  // mbedtls_md_hmac_starts accepts a zero-length key (HMAC zero-pads keys to the block size).
  if (ready_ && mbedtls_md_hmac_starts(&md_, key.data(), key.size()) == 0 &&
      hmac_finish({}, parts, {}, out.data())) {
    return Error::ok;
  }
  secure_wipe(out.mutable_view());
  return Error::crypto_failure;
}

// Why not mbedtls_hkdf_extract/expand: they take one contiguous IKM/info buffer (the parts would
// have to be copied together) and set up a fresh MD context, i.e. an mbedtls_calloc, per call.
// RFC 5869 defines both steps as HMACs, so they run on the long-lived HMAC context instead.
Error MbedtlsCrypto::hkdf_extract(ByteView salt, std::span<const ByteView> ikm_parts,
                                  MutableByteView prk_out) noexcept {
  if (prk_out.size() != kHashSize) {
    secure_wipe(prk_out);
    return Error::invalid_argument;
  }
  if (salt.empty()) salt = ByteView(kZeroKey);
  // RFC 5869 2.2: PRK = HMAC-Hash(salt, IKM).
  if (ready_ && mbedtls_md_hmac_starts(&md_, salt.data(), salt.size()) == 0 &&
      hmac_finish({}, ikm_parts, {}, prk_out.data())) {
    return Error::ok;
  }
  secure_wipe(prk_out);
  return Error::crypto_failure;
}

Error MbedtlsCrypto::hkdf_expand(ByteView prk, std::span<const ByteView> info_parts,
                                 MutableByteView okm) noexcept {
  // RFC 5869 2.3 requires a PRK of at least HashLen bytes (mbedtls_hkdf_expand refuses shorter
  // ones too). Output that overlaps an input would overwrite it between blocks.
  if (!crypto_rules::hkdf_expand_arguments_ok(prk, info_parts, okm)) {
    secure_wipe(okm);
    return Error::invalid_argument;
  }
  if (!ready_ || mbedtls_md_hmac_starts(&md_, prk.data(), prk.size()) != 0) {
    secure_wipe(okm);
    return Error::crypto_failure;
  }
  // T(i) = HMAC-Hash(PRK, T(i-1) || info || i), T(0) empty; OKM = first L bytes of T(1) || T(2)...
  // Blocks after the first restart the HMAC with mbedtls_md_hmac_reset, which keeps the key.
  std::array<std::uint8_t, kHashSize> block{};
  std::size_t previous = 0;  // length of T(i-1): 0 for i = 1
  std::uint8_t counter = 1;
  for (std::size_t offset = 0; offset < okm.size(); ++counter) {
    const ByteView counter_byte(&counter, 1);
    const bool restarted = offset == 0 || mbedtls_md_hmac_reset(&md_) == 0;
    if (!restarted ||
        !hmac_finish(ByteView(block.data(), previous), info_parts, counter_byte, block.data())) {
      mbedtls_platform_zeroize(block.data(), block.size());
      secure_wipe(okm);
      return Error::crypto_failure;
    }
    const std::size_t n = std::min(kHashSize, okm.size() - offset);
    std::memcpy(okm.data() + offset, block.data(), n);
    offset += n;
    previous = kHashSize;
  }
  mbedtls_platform_zeroize(block.data(), block.size());
  return Error::ok;
}

mbedtls_gcm_context* MbedtlsCrypto::gcm_for_key(ByteView key) noexcept {
  // Re-keying frees and re-allocates the AES context inside mbedtls_gcm_setkey, so it happens only
  // for another key than the cached one. The comparison is constant-time because both operands
  // are secret: the time shows at most whether the key changed, never how much of it matched.
  if (gcm_.keyed && constant_time_equal(key, ByteView(gcm_.key))) return &gcm_.ctx;
  gcm_.keyed = false;  // until setkey has succeeded
  if (mbedtls_gcm_setkey(&gcm_.ctx, MBEDTLS_CIPHER_ID_AES, key.data(), 8 * kAeadKeySize) != 0) {
    mbedtls_platform_zeroize(gcm_.key.data(), gcm_.key.size());
    return nullptr;
  }
  std::memcpy(gcm_.key.data(), key.data(), gcm_.key.size());
  gcm_.keyed = true;
  return &gcm_.ctx;
}

Error MbedtlsCrypto::aes128_gcm_seal(ByteView key, const AeadNonce& nonce, ByteView aad,
                                     ByteView plaintext, MutableByteView ciphertext,
                                     AeadTag& tag) noexcept {
  if (!crypto_rules::gcm_arguments_ok(key, plaintext, ciphertext)) {
    secure_wipe(ciphertext);
    secure_wipe(tag.mutable_view());
    return Error::invalid_argument;
  }
  mbedtls_gcm_context* gcm = ready_ ? gcm_for_key(key) : nullptr;
  if (gcm == nullptr ||
      mbedtls_gcm_crypt_and_tag(gcm, MBEDTLS_GCM_ENCRYPT, plaintext.size(), nonce.data(),
                                nonce.size(), aad.data(), aad.size(), plaintext.data(),
                                ciphertext.data(), tag.size(), tag.data()) != 0) {
    secure_wipe(ciphertext);
    secure_wipe(tag.mutable_view());
    return Error::crypto_failure;
  }
  return Error::ok;
}

Error MbedtlsCrypto::aes128_gcm_open(ByteView key, const AeadNonce& nonce, ByteView aad,
                                     ByteView ciphertext, const AeadTag& tag,
                                     MutableByteView plaintext) noexcept {
  if (!crypto_rules::gcm_arguments_ok(key, ciphertext, plaintext)) {
    secure_wipe(plaintext);
    return Error::invalid_argument;
  }
  mbedtls_gcm_context* gcm = ready_ ? gcm_for_key(key) : nullptr;
  if (gcm == nullptr) {
    secure_wipe(plaintext);
    return Error::crypto_failure;
  }
  // mbedtls_gcm_auth_decrypt checks the tag in constant time and zeroizes the output itself when
  // it fails; the wipe below also covers the other error paths. In-place decryption works although
  // gcm.h says otherwise: 2.28's software mbedtls_gcm_update reads each input byte before writing
  // the same output byte, and refuses only an output that starts inside the input. (A port that
  // swaps in a hardware GCM through MBEDTLS_GCM_ALT must re-run the in-place test.)
  const int rc = mbedtls_gcm_auth_decrypt(gcm, ciphertext.size(), nonce.data(), nonce.size(),
                                          aad.data(), aad.size(), tag.data(), tag.size(),
                                          ciphertext.data(), plaintext.data());
  if (rc == 0) return Error::ok;
  secure_wipe(plaintext);
  return rc == MBEDTLS_ERR_GCM_AUTH_FAILED ? Error::auth_failed : Error::crypto_failure;
}

MbedtlsRng::MbedtlsRng() noexcept {
  mbedtls_entropy_init(&entropy_);
  mbedtls_ctr_drbg_init(&drbg_);
  ready_ = mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_,
                                 reinterpret_cast<const unsigned char*>(kDrbgPersonalisation),
                                 sizeof(kDrbgPersonalisation) - 1) == 0;
}

MbedtlsRng::~MbedtlsRng() {
  mbedtls_ctr_drbg_free(&drbg_);  // zeroizes the DRBG state
  mbedtls_entropy_free(&entropy_);
}

Error MbedtlsRng::fill(MutableByteView out) noexcept {
  if (!ready_) {
    secure_wipe(out);
    return Error::crypto_failure;
  }
  // One DRBG request is limited to MBEDTLS_CTR_DRBG_MAX_REQUEST bytes.
  for (std::size_t offset = 0; offset < out.size();) {
    const std::size_t n =
        std::min(out.size() - offset, static_cast<std::size_t>(MBEDTLS_CTR_DRBG_MAX_REQUEST));
    if (mbedtls_ctr_drbg_random(&drbg_, out.data() + offset, n) != 0) {
      secure_wipe(out);
      return Error::crypto_failure;
    }
    offset += n;
  }
  return Error::ok;
}

}  // namespace dsekp
