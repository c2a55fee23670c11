// The CryptoBackend contract beyond the known answers, on both backends: argument checks
// (invalid_argument with zeroed outputs), HKDF length limits, empty keys and salts, and the
// backends' OS-seeded random sources.
#include <array>

#include "crypto_test_util.hpp"

namespace dsekp::test {
namespace {

class Contract : public BackendTest {};

TEST_P(Contract, NameIdentifiesTheBackend) {
  EXPECT_STREQ(crypto().name(), kind_name(GetParam()));
}

TEST_P(Contract, GcmRefusesKeysThatAreNot16Bytes) {
  const AeadNonce nonce;
  const Bytes plaintext(19, 0x42);
  for (std::size_t key_size : {0, 1, 15, 17, 24, 32}) {
    SCOPED_TRACE(::testing::Message() << "key size " << key_size);
    const Bytes key(key_size, 0x01);
    Bytes ct(plaintext.size(), 0xA5);
    AeadTag tag = tag_of(Bytes(kTagSize, 0xA5));
    EXPECT_EQ(crypto().aes128_gcm_seal(key, nonce, {}, plaintext, ct, tag),
              Error::invalid_argument);
    EXPECT_TRUE(all_zero(ct));
    EXPECT_TRUE(all_zero(tag.view()));
    Bytes opened(plaintext.size(), 0xA5);
    EXPECT_EQ(crypto().aes128_gcm_open(key, nonce, {}, plaintext, AeadTag(), opened),
              Error::invalid_argument);
    EXPECT_TRUE(all_zero(opened));
  }
}

TEST_P(Contract, GcmRefusesMismatchedBufferSizes) {
  const Bytes key(kAeadKeySize, 0x01);
  const AeadNonce nonce;
  const Bytes plaintext(19, 0x42);
  for (std::size_t out_size : {0, 18, 20, 35}) {
    SCOPED_TRACE(::testing::Message() << "output size " << out_size);
    Bytes out(out_size, 0xA5);
    AeadTag tag = tag_of(Bytes(kTagSize, 0xA5));
    EXPECT_EQ(crypto().aes128_gcm_seal(key, nonce, {}, plaintext, out, tag),
              Error::invalid_argument);
    EXPECT_TRUE(all_zero(out));
    EXPECT_TRUE(all_zero(tag.view()));
    std::fill(out.begin(), out.end(), 0xA5);
    EXPECT_EQ(crypto().aes128_gcm_open(key, nonce, {}, plaintext, AeadTag(), out),
              Error::invalid_argument);
    EXPECT_TRUE(all_zero(out));
  }
}

TEST_P(Contract, HkdfExpandLengthLimits) {
  const Bytes prk(kHashSize, 0x07);
  const Bytes info = {'i', 'n', 'f', 'o'};
  const ByteView info_parts[] = {info};

  EXPECT_EQ(crypto().hkdf_expand(prk, info_parts, {}), Error::invalid_argument);

  Bytes too_long(255 * kHashSize + 1, 0xA5);
  EXPECT_EQ(crypto().hkdf_expand(prk, info_parts, too_long), Error::invalid_argument);
  EXPECT_TRUE(all_zero(too_long));

  // The maximum is allowed, and its last block (counter 255) is real output. Its first 42 bytes
  // equal a 42-byte expansion: the counter did not restart or wrap.
  Bytes longest(255 * kHashSize);
  ASSERT_EQ(crypto().hkdf_expand(prk, info_parts, longest), Error::ok);
  EXPECT_FALSE(all_zero(ByteView(longest).last(kHashSize)));
  Bytes short_okm(42);
  ASSERT_EQ(crypto().hkdf_expand(prk, info_parts, short_okm), Error::ok);
  EXPECT_EQ(ByteView(longest).first(42).size(), short_okm.size());
  EXPECT_TRUE(std::equal(short_okm.begin(), short_okm.end(), longest.begin()));
  // No two of the 255 blocks are equal (they would be if the counter or chaining were broken).
  for (std::size_t i = 0; i < 255; ++i) {
    for (std::size_t j = i + 1; j < 255; ++j) {
      ASSERT_FALSE(std::equal(longest.begin() + 32 * i, longest.begin() + 32 * (i + 1),
                              longest.begin() + 32 * j))
          << "blocks " << i << " and " << j;
    }
  }
}

TEST_P(Contract, HkdfExpandRefusesShortPrk) {
  const Bytes prk(kHashSize - 1, 0x07);
  Bytes okm(32, 0xA5);
  EXPECT_EQ(crypto().hkdf_expand(prk, {}, okm), Error::invalid_argument);
  EXPECT_TRUE(all_zero(okm));
  // A PRK longer than HashLen is allowed (RFC 5869 says "at least HashLen").
  const Bytes long_prk(kHashSize + 9, 0x07);
  EXPECT_EQ(crypto().hkdf_expand(long_prk, {}, okm), Error::ok);
}

TEST_P(Contract, HkdfExpandRefusesOutputOverlappingInput) {
  Bytes buffer(64, 0x07);
  const ByteView prk = ByteView(buffer).first(kHashSize);
  EXPECT_EQ(crypto().hkdf_expand(prk, {}, MutableByteView(buffer).subspan(16, 40)),
            Error::invalid_argument);
  Bytes info(8, 0x01);
  const ByteView info_parts[] = {info};
  EXPECT_EQ(crypto().hkdf_expand(prk, info_parts, MutableByteView(info)), Error::invalid_argument);
}

TEST_P(Contract, HkdfExtractNeedsA32ByteOutput) {
  const Bytes ikm(22, 0x0b);
  const ByteView parts[] = {ikm};
  for (std::size_t size : {0, 16, 31, 33, 64}) {
    Bytes prk(size, 0xA5);
    EXPECT_EQ(crypto().hkdf_extract({}, parts, prk), Error::invalid_argument) << size;
    EXPECT_TRUE(all_zero(prk)) << size;
  }
}

// RFC 5869 2.2: an empty salt is HashLen zero bytes.
TEST_P(Contract, HkdfExtractEmptySaltIsZeroSalt) {
  const Bytes ikm(22, 0x0b);
  const ByteView parts[] = {ikm};
  std::array<std::uint8_t, kHashSize> empty_salt{}, zero_salt{};
  ASSERT_EQ(crypto().hkdf_extract({}, parts, empty_salt), Error::ok);
  ASSERT_EQ(crypto().hkdf_extract(Bytes(kHashSize, 0), parts, zero_salt), Error::ok);
  EXPECT_EQ(empty_salt, zero_salt);
  EXPECT_EQ(to_hex(empty_salt), "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04");
}

// HMAC-SHA256 with an empty key and an empty message (no parts at all). Reference value computed
// with Python's hmac module; HMAC zero-pads the key, so a 32-byte zero key gives the same MAC.
TEST_P(Contract, HmacEmptyKeyAndMessage) {
  constexpr const char* kExpected =
      "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad";
  Sha256Digest mac;
  ASSERT_EQ(crypto().hmac_sha256({}, {}, mac), Error::ok);
  EXPECT_EQ(to_hex(mac.view()), kExpected);
  const ByteView empty_parts[] = {{}, {}};
  ASSERT_EQ(crypto().hmac_sha256(Bytes(kHashSize, 0), empty_parts, mac), Error::ok);
  EXPECT_EQ(to_hex(mac.view()), kExpected);
}

// The MAC context is reused: a long key, then a short one, then the long one again must give the
// same results as on first use (no key state leaking from one call into the next).
TEST_P(Contract, HmacKeyChangesTakeEffect) {
  const Bytes long_key(131, 0xaa), short_key = {'J', 'e', 'f', 'e'};
  const Bytes msg = {'m', 's', 'g'};
  const ByteView parts[] = {msg};
  Sha256Digest first_long, first_short, again_long;
  ASSERT_EQ(crypto().hmac_sha256(long_key, parts, first_long), Error::ok);
  ASSERT_EQ(crypto().hmac_sha256(short_key, parts, first_short), Error::ok);
  ASSERT_EQ(crypto().hmac_sha256(long_key, parts, again_long), Error::ok);
  EXPECT_TRUE(first_long.equals(again_long));
  EXPECT_FALSE(first_long.equals(first_short));
}

TEST(BackendRng, OsSeededSourcesProduceFreshBytes) {
  OpenSslRng openssl_rng;
  MbedtlsRng mbedtls_rng;
  ASSERT_TRUE(mbedtls_rng.ready());
  Rng* sources[] = {&openssl_rng, &mbedtls_rng};
  for (Rng* rng : sources) {
    // More than one mbedTLS DRBG request (1024 bytes) and an odd length.
    Bytes a(5001), b(5001);
    ASSERT_EQ(rng->fill(a), Error::ok);
    ASSERT_EQ(rng->fill(b), Error::ok);
    EXPECT_NE(a, b);
    // No long run of zeros that an unfilled chunk would leave: every 1024-byte window has a
    // non-zero byte (chance of failure for real random data: about 2^-8192).
    for (std::size_t offset = 0; offset + 1024 <= a.size(); offset += 1024) {
      EXPECT_FALSE(all_zero(ByteView(a).subspan(offset, 1024)));
    }
    EXPECT_FALSE(all_zero(ByteView(a).last(a.size() % 1024)));
    EXPECT_EQ(rng->fill({}), Error::ok);
  }
}

DSEKP_INSTANTIATE_FOR_BOTH_BACKENDS(Contract);

}  // namespace
}  // namespace dsekp::test
