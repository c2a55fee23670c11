// Interoperability of the two backends, which is what a device (mbedTLS) talking to an edge
// (OpenSSL) relies on: messages sealed on one open on the other, both ways, and HMAC and HKDF agree
// byte for byte on pseudo-random inputs (SeededRng: repeatable, so a failure can be replayed).

#include "crypto/testing/seeded_rng.hpp"
#include "crypto_test_util.hpp"

namespace dsekp::test {
namespace {

constexpr int kIterations = 300;

class CrossBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(openssl_.ready());
    ASSERT_TRUE(mbedtls_.ready());
  }

  Bytes random_bytes(std::size_t n) {
    Bytes out(n);
    EXPECT_EQ(rng_.fill(out), Error::ok);
    return out;
  }
  std::size_t random_size(std::size_t max_inclusive) {
    std::uint8_t raw[4];
    EXPECT_EQ(rng_.fill(raw), Error::ok);
    return load_be32(raw) % (max_inclusive + 1);
  }
  // Splits `bytes` into 0-4 consecutive parts at random points (parts may be empty).
  std::vector<ByteView> random_split(const Bytes& bytes) {
    std::vector<ByteView> parts;
    const std::size_t count = random_size(4);
    ByteView rest(bytes);
    for (std::size_t i = 0; i + 1 < count; ++i) {
      const std::size_t n = random_size(rest.size());
      parts.push_back(rest.first(n));
      rest = rest.subspan(n);
    }
    if (count > 0) parts.push_back(rest);
    if (count == 0 && !bytes.empty()) parts.push_back(rest);  // never drop input
    return parts;
  }

  OpenSslCrypto openssl_;
  MbedtlsCrypto mbedtls_;
  SeededRng rng_{20240601};
};

TEST_F(CrossBackend, SealOnOneOpenOnTheOther) {
  for (int i = 0; i < kIterations; ++i) {
    SCOPED_TRACE(::testing::Message() << "iteration " << i);
    const Bytes key = random_bytes(kAeadKeySize);
    const AeadNonce nonce = nonce_of(random_bytes(kNonceSize));
    const Bytes aad = random_bytes(random_size(64));
    const Bytes plaintext = random_bytes(random_size(300));

    Bytes ct_openssl(plaintext.size()), ct_mbedtls(plaintext.size());
    AeadTag tag_openssl, tag_mbedtls;
    ASSERT_EQ(openssl_.aes128_gcm_seal(key, nonce, aad, plaintext, ct_openssl, tag_openssl),
              Error::ok);
    ASSERT_EQ(mbedtls_.aes128_gcm_seal(key, nonce, aad, plaintext, ct_mbedtls, tag_mbedtls),
              Error::ok);
    EXPECT_EQ(ct_openssl, ct_mbedtls);
    EXPECT_TRUE(tag_openssl.equals(tag_mbedtls));

    Bytes opened(plaintext.size());
    ASSERT_EQ(mbedtls_.aes128_gcm_open(key, nonce, aad, ct_openssl, tag_openssl, opened),
              Error::ok);
    EXPECT_EQ(opened, plaintext);
    ASSERT_EQ(openssl_.aes128_gcm_open(key, nonce, aad, ct_mbedtls, tag_mbedtls, opened),
              Error::ok);
    EXPECT_EQ(opened, plaintext);
  }
}

TEST_F(CrossBackend, HmacAgrees) {
  for (int i = 0; i < kIterations; ++i) {
    SCOPED_TRACE(::testing::Message() << "iteration " << i);
    // Keys from empty to longer than the 64-byte block (which HMAC hashes first).
    const Bytes key = random_bytes(random_size(150));
    const Bytes msg = random_bytes(random_size(300));
    const std::vector<ByteView> parts = random_split(msg);
    Sha256Digest a, b;
    ASSERT_EQ(openssl_.hmac_sha256(key, parts, a), Error::ok);
    ASSERT_EQ(mbedtls_.hmac_sha256(key, parts, b), Error::ok);
    EXPECT_TRUE(a.equals(b)) << to_hex(a.view()) << " vs " << to_hex(b.view());
  }
}

TEST_F(CrossBackend, HkdfAgrees) {
  for (int i = 0; i < kIterations; ++i) {
    SCOPED_TRACE(::testing::Message() << "iteration " << i);
    const Bytes salt = random_bytes(random_size(80));
    const Bytes ikm = random_bytes(random_size(120));
    const Bytes info = random_bytes(random_size(100));
    const std::vector<ByteView> ikm_parts = random_split(ikm);
    const std::vector<ByteView> info_parts = random_split(info);

    std::array<std::uint8_t, kHashSize> prk_a{}, prk_b{};
    ASSERT_EQ(openssl_.hkdf_extract(salt, ikm_parts, prk_a), Error::ok);
    ASSERT_EQ(mbedtls_.hkdf_extract(salt, ikm_parts, prk_b), Error::ok);
    EXPECT_EQ(prk_a, prk_b);

    const std::size_t length = 1 + random_size(599);
    Bytes okm_a(length), okm_b(length);
    ASSERT_EQ(openssl_.hkdf_expand(prk_a, info_parts, okm_a), Error::ok);
    ASSERT_EQ(mbedtls_.hkdf_expand(prk_a, info_parts, okm_b), Error::ok);
    EXPECT_EQ(okm_a, okm_b);
  }
}

}  // namespace
}  // namespace dsekp::test
