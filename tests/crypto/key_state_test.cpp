// The key state the backends keep between calls, on both backends: forget_keys() leaves every
// primitive correct (known answers before and after, repeatedly), a message sealed under a key
// that was cached before forget_keys() still opens (the backend re-keys), and the two-entry AES-GCM
// key cache gives the same results as a backend that never saw another key, whatever the order of
// three keys. For mbedTLS, whose context structs are public, the tests also read the library
// state after forget_keys(): the HMAC pads are those of the all-zero key, the hash state no longer
// holds the last MAC or HKDF output, and both GCM contexts are freed and zeroed.
#include <mbedtls/sha256.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "crypto_test_util.hpp"
#include "rfc5869_vectors.hpp"

namespace dsekp::test {
namespace {

// RFC 4231 test case 2, RFC 5869 A.1-A.3 (rfc5869_vectors.hpp), McGrew-Viega GCM test cases 2
// (all-zero key) and 4, as in rfc_vectors_test.cpp.
constexpr std::string_view kHmacKey = "4a656665";
constexpr std::string_view kHmacData = "7768617420646f2079612077616e7420666f72206e6f7468696e673f";
constexpr std::string_view kHmacMac =
    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";

struct GcmCase {
  std::string_view key, plaintext, iv, aad, ciphertext, tag;
};
const GcmCase kGcm[] = {
    {"00000000000000000000000000000000", "00000000000000000000000000000000",
     "000000000000000000000000", "", "0388dace60b6a392f328c2b971b2fe78",
     "ab6e47d42cec13bdf53a67b21257bddf"},
    {"feffe9928665731c6d6a8f9467308308",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b"
     "525b16aedf5aa0de657ba637b39",
     "cafebabefacedbaddecaf888", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84a"
     "a051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
};

// HMAC-SHA256 under the all-zero (or empty) key of the empty message; see contract test.
constexpr std::string_view kZeroKeyEmptyMac =
    "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad";

// Runs every primitive on known answers; failures name the primitive.
void expect_all_known_answers(CryptoBackend& crypto) {
  {
    const Bytes key = hex(kHmacKey), data = hex(kHmacData);
    const ByteView parts[] = {data};
    Sha256Digest mac;
    ASSERT_EQ(crypto.hmac_sha256(key, parts, mac), Error::ok);
    EXPECT_EQ(to_hex(mac.view()), kHmacMac) << "hmac_sha256";
    ASSERT_EQ(crypto.hmac_sha256({}, {}, mac), Error::ok);
    EXPECT_EQ(to_hex(mac.view()), kZeroKeyEmptyMac) << "hmac_sha256, empty key";
  }
  for (const HkdfCase& tc : kRfc5869) {
    const Bytes ikm = hex(tc.ikm), salt = hex(tc.salt), info = hex(tc.info);
    const ByteView ikm_parts[] = {ikm};
    const ByteView info_parts[] = {info};
    std::array<std::uint8_t, kHashSize> prk{};
    ASSERT_EQ(crypto.hkdf_extract(salt, ikm_parts, prk), Error::ok);
    EXPECT_EQ(to_hex(prk), tc.prk) << "hkdf_extract";
    Bytes okm(tc.length);
    ASSERT_EQ(crypto.hkdf_expand(prk, info_parts, okm), Error::ok);
    EXPECT_EQ(to_hex(okm), tc.okm) << "hkdf_expand";
  }
  for (const GcmCase& tc : kGcm) {
    const Bytes key = hex(tc.key), pt = hex(tc.plaintext), aad = hex(tc.aad);
    const AeadNonce nonce = nonce_of(hex(tc.iv));
    Bytes ct(pt.size());
    AeadTag tag;
    ASSERT_EQ(crypto.aes128_gcm_seal(key, nonce, aad, pt, ct, tag), Error::ok);
    EXPECT_EQ(to_hex(ct), tc.ciphertext) << "aes128_gcm_seal";
    EXPECT_EQ(to_hex(tag.view()), tc.tag) << "aes128_gcm_seal";
    Bytes opened(ct.size(), 0xA5);
    ASSERT_EQ(
        crypto.aes128_gcm_open(key, nonce, aad, hex(tc.ciphertext), tag_of(hex(tc.tag)), opened),
        Error::ok);
    EXPECT_EQ(opened, pt) << "aes128_gcm_open";
  }
}

class ForgetKeys : public BackendTest {};

TEST_P(ForgetKeys, EveryPrimitiveIsCorrectAfterForget) {
  crypto().forget_keys();  // on a backend that has keyed nothing yet
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    expect_all_known_answers(crypto());
    crypto().forget_keys();
    if (round == 1) crypto().forget_keys();  // twice in a row
  }
}

// Each primitive alone after forget_keys(), so none is rescued by another having re-keyed first.
TEST_P(ForgetKeys, EachPrimitiveAloneAfterForget) {
  expect_all_known_answers(crypto());
  const HkdfCase& hkdf = kRfc5869[1];
  const GcmCase& gcm = kGcm[1];

  crypto().forget_keys();
  const Bytes hmac_key = hex(kHmacKey), hmac_data = hex(kHmacData);
  const ByteView hmac_parts[] = {hmac_data};
  Sha256Digest mac;
  ASSERT_EQ(crypto().hmac_sha256(hmac_key, hmac_parts, mac), Error::ok);
  EXPECT_EQ(to_hex(mac.view()), kHmacMac);

  crypto().forget_keys();
  const Bytes ikm = hex(hkdf.ikm), salt = hex(hkdf.salt), info = hex(hkdf.info);
  const ByteView ikm_parts[] = {ikm};
  std::array<std::uint8_t, kHashSize> prk{};
  ASSERT_EQ(crypto().hkdf_extract(salt, ikm_parts, prk), Error::ok);
  EXPECT_EQ(to_hex(prk), hkdf.prk);

  crypto().forget_keys();
  const ByteView info_parts[] = {info};
  Bytes okm(hkdf.length);
  ASSERT_EQ(crypto().hkdf_expand(prk, info_parts, okm), Error::ok);
  EXPECT_EQ(to_hex(okm), hkdf.okm);

  crypto().forget_keys();
  const Bytes key = hex(gcm.key), pt = hex(gcm.plaintext), aad = hex(gcm.aad);
  const AeadNonce nonce = nonce_of(hex(gcm.iv));
  Bytes ct(pt.size());
  AeadTag tag;
  ASSERT_EQ(crypto().aes128_gcm_seal(key, nonce, aad, pt, ct, tag), Error::ok);
  EXPECT_EQ(to_hex(ct), gcm.ciphertext);
  EXPECT_EQ(to_hex(tag.view()), gcm.tag);

  crypto().forget_keys();
  Bytes opened(ct.size(), 0xA5);
  ASSERT_EQ(crypto().aes128_gcm_open(key, nonce, aad, ct, tag, opened), Error::ok);
  EXPECT_EQ(opened, pt);
}

// Messages sealed under the two cached keys still open after forget_keys(): the backend re-keys
// instead of believing the keys are still installed. A forged tag is still refused.
TEST_P(ForgetKeys, GcmOpensUnderPreviouslyCachedKeys) {
  const Bytes key_a(kAeadKeySize, 0x3c), key_b(kAeadKeySize, 0xc3);
  const Bytes pt = {'r', 'e', 'a', 'd', 'i', 'n', 'g'}, aad = {'h', 'd', 'r'};
  const AeadNonce nonce = nonce_of(Bytes(kNonceSize, 0x01));
  Bytes ct_a(pt.size()), ct_b(pt.size());
  AeadTag tag_a, tag_b;
  ASSERT_EQ(crypto().aes128_gcm_seal(key_a, nonce, aad, pt, ct_a, tag_a), Error::ok);
  ASSERT_EQ(crypto().aes128_gcm_seal(key_b, nonce, aad, pt, ct_b, tag_b), Error::ok);
  ASSERT_NE(ct_a, ct_b);

  crypto().forget_keys();
  Bytes opened(pt.size(), 0xA5);
  ASSERT_EQ(crypto().aes128_gcm_open(key_a, nonce, aad, ct_a, tag_a, opened), Error::ok);
  EXPECT_EQ(opened, pt);

  crypto().forget_keys();
  std::fill(opened.begin(), opened.end(), 0xA5);
  ASSERT_EQ(crypto().aes128_gcm_open(key_b, nonce, aad, ct_b, tag_b, opened), Error::ok);
  EXPECT_EQ(opened, pt);
  std::fill(opened.begin(), opened.end(), 0xA5);
  ASSERT_EQ(crypto().aes128_gcm_open(key_a, nonce, aad, ct_a, tag_a, opened), Error::ok);
  EXPECT_EQ(opened, pt);

  crypto().forget_keys();
  Bytes forged_tag(tag_a.view().begin(), tag_a.view().end());
  forged_tag[0] ^= 1;
  std::fill(opened.begin(), opened.end(), 0xA5);
  EXPECT_EQ(crypto().aes128_gcm_open(key_a, nonce, aad, ct_a, tag_of(forged_tag), opened),
            Error::auth_failed);
  EXPECT_TRUE(all_zero(opened));
  // A message under the wrong cached key does not open either.
  EXPECT_EQ(crypto().aes128_gcm_open(key_b, nonce, aad, ct_a, tag_a, opened), Error::auth_failed);
}

// After forget_keys() a backend holds a dummy all-zero key; the all-zero key must still be treated
// as a real key the caller asked for (McGrew-Viega case 2 is under the all-zero key).
TEST_P(ForgetKeys, AllZeroKeyAfterForgetIsARealKey) {
  const GcmCase& tc = kGcm[0];
  const Bytes key = hex(tc.key), pt = hex(tc.plaintext);
  const AeadNonce nonce = nonce_of(hex(tc.iv));
  for (int round = 0; round < 2; ++round) {
    crypto().forget_keys();
    Bytes ct(pt.size());
    AeadTag tag;
    ASSERT_EQ(crypto().aes128_gcm_seal(key, nonce, {}, pt, ct, tag), Error::ok);
    EXPECT_EQ(to_hex(ct), tc.ciphertext);
    EXPECT_EQ(to_hex(tag.view()), tc.tag);
    crypto().forget_keys();
    Bytes opened(pt.size(), 0xA5);
    ASSERT_EQ(crypto().aes128_gcm_open(key, nonce, {}, ct, tag, opened), Error::ok);
    EXPECT_EQ(opened, pt);
    Sha256Digest mac;
    crypto().forget_keys();
    ASSERT_EQ(crypto().hmac_sha256(Bytes(kHashSize, 0), {}, mac), Error::ok);
    EXPECT_EQ(to_hex(mac.view()), kZeroKeyEmptyMac);
  }
}

DSEKP_INSTANTIATE_FOR_BOTH_BACKENDS(ForgetKeys);

// The AES-GCM key cache holds two keys and replaces the least recently used. Three keys in an
// order that hits, misses, evicts and alternates (with forget_keys() in between at times) must give
// exactly what one backend per key gives (a backend that only ever sees one key).
class GcmKeyCache : public BackendTest {};

TEST_P(GcmKeyCache, ThreeKeysInAnyOrderMatchOneBackendPerKey) {
  const Bytes keys[] = {Bytes(kAeadKeySize, 0x11), Bytes(kAeadKeySize, 0x22),
                        Bytes(kAeadKeySize, 0x33)};
  AnyBackend reference[] = {AnyBackend(GetParam()), AnyBackend(GetParam()), AnyBackend(GetParam())};
  // Explicit patterns (alternation, LRU eviction of either slot), then a pseudo-random tail.
  std::vector<int> order = {0, 1, 0, 1, 2, 0, 2, 1, 1, 0, 2, 2, 0, 1, 2, 0, 1, -1, 1, 0, 1, 2};
  std::uint32_t lcg = 12345;
  for (int i = 0; i < 300; ++i) {
    lcg = lcg * 1664525u + 1013904223u;
    const int pick = static_cast<int>((lcg >> 24) % 7);
    order.push_back(pick < 6 ? pick % 3 : -1);  // -1: forget_keys()
  }
  Bytes pt(23);
  for (std::size_t step = 0; step < order.size(); ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    if (order[step] < 0) {
      crypto().forget_keys();
      continue;
    }
    const auto k = static_cast<std::size_t>(order[step]);
    ASSERT_TRUE(reference[k].ready());
    std::fill(pt.begin(), pt.end(), static_cast<std::uint8_t>(step));
    Bytes nonce_bytes(kNonceSize, 0);
    nonce_bytes[0] = static_cast<std::uint8_t>(step);
    nonce_bytes[1] = static_cast<std::uint8_t>(step >> 8);
    const AeadNonce nonce = nonce_of(nonce_bytes);

    Bytes expected_ct(pt.size()), ct(pt.size());
    AeadTag expected_tag, tag;
    ASSERT_EQ(reference[k].get().aes128_gcm_seal(keys[k], nonce, {}, pt, expected_ct, expected_tag),
              Error::ok);
    if (step % 2 == 0) {
      ASSERT_EQ(crypto().aes128_gcm_seal(keys[k], nonce, {}, pt, ct, tag), Error::ok);
      EXPECT_EQ(ct, expected_ct);
      EXPECT_TRUE(tag.equals(expected_tag));
    } else {
      Bytes opened(pt.size(), 0xA5);
      ASSERT_EQ(crypto().aes128_gcm_open(keys[k], nonce, {}, expected_ct, expected_tag, opened),
                Error::ok);
      EXPECT_EQ(opened, pt);
    }
  }
}

DSEKP_INSTANTIATE_FOR_BOTH_BACKENDS(GcmKeyCache);

// ---- mbedTLS: the library state itself, through its public structs ----

constexpr std::size_t kSha256Block = 64;

// The SHA-256 context behind an HMAC context (mbedTLS 2.28, software SHA-256: md_ctx points to an
// mbedtls_sha256_context). The "before" checks below fail if that assumption breaks.
const mbedtls_sha256_context& sha256_of(const mbedtls_md_context_t& md) {
  return *static_cast<const mbedtls_sha256_context*>(md.md_ctx);
}

// The 32-byte digest an mbedTLS SHA-256 state would output (big-endian words).
Bytes state_bytes(const mbedtls_sha256_context& sha) {
  Bytes out;
  for (std::uint32_t word : sha.state) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.push_back(static_cast<std::uint8_t>(word >> shift));
    }
  }
  return out;
}

bool contains(ByteView haystack, ByteView needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) !=
         haystack.end();
}

ByteView bytes_of(const void* p, std::size_t n) {
  return ByteView(static_cast<const std::uint8_t*>(p), n);
}

class MbedtlsKeyState : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(crypto_.ready()); }
  ByteView ipad() const {
    return bytes_of(crypto_.hmac_context_for_tests().hmac_ctx, kSha256Block);
  }
  ByteView opad() const {
    return bytes_of(
        static_cast<const std::uint8_t*>(crypto_.hmac_context_for_tests().hmac_ctx) + kSha256Block,
        kSha256Block);
  }
  MbedtlsCrypto crypto_;
};

// mbedtls_md_context_t.hmac_ctx holds ipad || opad: key XOR 0x36 and key XOR 0x5c, zero-padded
// to the block. After forget_keys() they must be those of the all-zero key, and no trace of the
// previous key (XOR 0x36 or 0x5c, or in clear) may be left in them.
TEST_F(MbedtlsKeyState, HmacPadsAreThoseOfTheZeroKeyAfterForget) {
  Bytes key(kHashSize);
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(0xA0 + i);
  Bytes key_ipad(kSha256Block, 0x36), key_opad(kSha256Block, 0x5c);
  for (std::size_t i = 0; i < key.size(); ++i) {
    key_ipad[i] ^= key[i];
    key_opad[i] ^= key[i];
  }
  const Bytes msg = {'m', 's', 'g'};
  const ByteView parts[] = {msg};
  Sha256Digest mac;
  ASSERT_EQ(crypto_.hmac_sha256(key, parts, mac), Error::ok);
  // Before: the pads are those of `key` (so the test reads the right bytes).
  ASSERT_EQ(to_bytes(ipad()), key_ipad);
  ASSERT_EQ(to_bytes(opad()), key_opad);

  crypto_.forget_keys();
  EXPECT_EQ(to_bytes(ipad()), Bytes(kSha256Block, 0x36));
  EXPECT_EQ(to_bytes(opad()), Bytes(kSha256Block, 0x5c));
  const ByteView pads = bytes_of(crypto_.hmac_context_for_tests().hmac_ctx, 2 * kSha256Block);
  const ByteView key_ipad_part = ByteView(key_ipad).first(key.size());
  const ByteView key_opad_part = ByteView(key_opad).first(key.size());
  for (std::size_t i = 0; i + 4 <= key.size(); ++i) {
    EXPECT_FALSE(contains(pads, key_ipad_part.subspan(i, 4))) << i;
    EXPECT_FALSE(contains(pads, key_opad_part.subspan(i, 4))) << i;
    EXPECT_FALSE(contains(pads, ByteView(key).subspan(i, 4))) << i;
  }
}

// After a MAC the SHA-256 state is that MAC, i.e. after hkdf_expand the last output block (key
// material), and the block buffer holds the last inner hash. forget_keys() must overwrite both.
TEST_F(MbedtlsKeyState, HashStateNoLongerHoldsTheLastOutput) {
  const Bytes prk(kHashSize, 0x5a), info = {'k', 'e', 'y', 's'};
  const ByteView info_parts[] = {info};
  Bytes okm(42);  // two blocks: T(2) is the last, its first 10 bytes are okm[32..42)
  ASSERT_EQ(crypto_.hkdf_expand(prk, info_parts, okm), Error::ok);
  const ByteView last_output = ByteView(okm).subspan(32, 10);
  const mbedtls_sha256_context& sha = sha256_of(crypto_.hmac_context_for_tests());
  // Before: the state is T(2) (so the test reads the right bytes).
  ASSERT_EQ(to_hex(ByteView(state_bytes(sha)).first(10)), to_hex(last_output));

  // The inner hash of the last MAC, T(2)'s: SHA-256((PRK ^ ipad) || T(1) || info || 0x02).
  Bytes inner_input(kSha256Block, 0x36);
  for (std::size_t i = 0; i < prk.size(); ++i) inner_input[i] ^= prk[i];
  inner_input.insert(inner_input.end(), okm.begin(), okm.begin() + 32);
  inner_input.insert(inner_input.end(), info.begin(), info.end());
  inner_input.push_back(2);
  std::array<std::uint8_t, 32> inner{};
  ASSERT_EQ(mbedtls_sha256_ret(inner_input.data(), inner_input.size(), inner.data(), 0), 0);
  ASSERT_TRUE(contains(ByteView(sha.buffer), ByteView(inner)));

  crypto_.forget_keys();
  // After: the state is the MAC of the empty message under the zero key, and neither the last
  // output nor the last inner hash is anywhere in the SHA-256 context.
  EXPECT_EQ(to_hex(state_bytes(sha)), kZeroKeyEmptyMac);
  const ByteView whole = bytes_of(&sha, sizeof(sha));
  EXPECT_FALSE(contains(whole, last_output));
  EXPECT_FALSE(contains(whole, ByteView(inner).first(8)));
  EXPECT_FALSE(contains(whole, ByteView(okm).first(8)));  // T(1)
}

// The GCM context: keyed (AES context allocated, GHASH tables set) before, and after
// forget_keys() freed and all zero (mbedtls_gcm_free zeroizes, mbedtls_gcm_init leaves zeros).
TEST_F(MbedtlsKeyState, GcmContextIsFreedAndZeroedAfterForget) {
  const Bytes key_a(kAeadKeySize, 0x3c), key_b(kAeadKeySize, 0xc3), pt(16, 0x42);
  const AeadNonce nonce;
  Bytes ct(pt.size());
  AeadTag tag;
  ASSERT_EQ(crypto_.aes128_gcm_seal(key_a, nonce, {}, pt, ct, tag), Error::ok);
  ASSERT_EQ(crypto_.aes128_gcm_seal(key_b, nonce, {}, pt, ct, tag), Error::ok);
  const mbedtls_gcm_context& gcm = crypto_.gcm_context_for_tests();
  ASSERT_NE(gcm.cipher_ctx.cipher_ctx, nullptr);
  ASSERT_FALSE(all_zero(bytes_of(gcm.HL, sizeof(gcm.HL))));

  crypto_.forget_keys();
  EXPECT_TRUE(all_zero(bytes_of(&gcm, sizeof(gcm))));
  // And they work again.
  Bytes opened(pt.size());
  EXPECT_EQ(crypto_.aes128_gcm_open(key_b, nonce, {}, ct, tag, opened), Error::ok);
  EXPECT_EQ(opened, pt);
}

}  // namespace
}  // namespace dsekp::test
