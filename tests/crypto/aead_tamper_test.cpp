// AES-128-GCM behaviour beyond the vectors, on both backends: round trip with AAD, every single-bit
// change of ciphertext, tag, AAD, nonce or key is rejected with a zeroed output, empty plaintext,
// in-place operation, and the backends' internal key caching (a changed key must take effect).
#include <array>

#include "crypto/testing/seeded_rng.hpp"
#include "crypto_test_util.hpp"

namespace dsekp::test {
namespace {

// The sizes of a small DSEKP DATA frame: a 19-byte reading under a 38-byte AAD.
constexpr std::size_t kPlaintextSize = 19;
constexpr std::size_t kAadSize = 38;

class Aead : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    SeededRng rng(0xD5E4B1);
    for (Bytes* b : {&key_, &nonce_bytes_, &aad_, &plaintext_}) {
      ASSERT_EQ(rng.fill(*b), Error::ok);
    }
    nonce_ = nonce_of(nonce_bytes_);
  }

  // Opens with the given inputs into a buffer pre-filled with a marker and checks the outcome.
  void expect_rejected(ByteView key, const AeadNonce& nonce, ByteView aad, ByteView ct,
                       const AeadTag& tag, const char* what, std::size_t bit) {
    Bytes out(ct.size(), 0xA5);
    EXPECT_EQ(crypto().aes128_gcm_open(key, nonce, aad, ct, tag, out), Error::auth_failed)
        << what << " bit " << bit;
    EXPECT_TRUE(all_zero(out)) << what << " bit " << bit << ": output not zeroed";
  }

  Bytes key_ = Bytes(kAeadKeySize);
  Bytes nonce_bytes_ = Bytes(kNonceSize);
  Bytes aad_ = Bytes(kAadSize);
  Bytes plaintext_ = Bytes(kPlaintextSize);
  AeadNonce nonce_;
};

void flip(Bytes& bytes, std::size_t bit) {
  bytes[bit / 8] = static_cast<std::uint8_t>(bytes[bit / 8] ^ (1u << (bit % 8)));
}

TEST_P(Aead, RoundTripWithAad) {
  Bytes ct(plaintext_.size());
  AeadTag tag;
  ASSERT_EQ(crypto().aes128_gcm_seal(key_, nonce_, aad_, plaintext_, ct, tag), Error::ok);
  EXPECT_NE(ct, plaintext_);
  EXPECT_FALSE(all_zero(tag.view()));

  Bytes opened(ct.size());
  ASSERT_EQ(crypto().aes128_gcm_open(key_, nonce_, aad_, ct, tag, opened), Error::ok);
  EXPECT_EQ(opened, plaintext_);
}

TEST_P(Aead, EverySingleBitChangeIsRejected) {
  Bytes ct(plaintext_.size());
  AeadTag tag;
  ASSERT_EQ(crypto().aes128_gcm_seal(key_, nonce_, aad_, plaintext_, ct, tag), Error::ok);

  for (std::size_t bit = 0; bit < 8 * ct.size(); ++bit) {
    Bytes changed = ct;
    flip(changed, bit);
    expect_rejected(key_, nonce_, aad_, changed, tag, "ciphertext", bit);
  }
  for (std::size_t bit = 0; bit < 8 * kTagSize; ++bit) {
    Bytes changed = to_bytes(tag.view());
    flip(changed, bit);
    expect_rejected(key_, nonce_, aad_, ct, tag_of(changed), "tag", bit);
  }
  for (std::size_t bit = 0; bit < 8 * aad_.size(); ++bit) {
    Bytes changed = aad_;
    flip(changed, bit);
    expect_rejected(key_, nonce_, changed, ct, tag, "aad", bit);
  }
  for (std::size_t bit = 0; bit < 8 * kNonceSize; ++bit) {
    Bytes changed = nonce_bytes_;
    flip(changed, bit);
    expect_rejected(key_, nonce_of(changed), aad_, ct, tag, "nonce", bit);
  }
  for (std::size_t bit = 0; bit < 8 * kAeadKeySize; ++bit) {
    Bytes changed = key_;
    flip(changed, bit);
    expect_rejected(changed, nonce_, aad_, ct, tag, "key", bit);
  }
  // Dropping or adding AAD, or truncating the ciphertext, is also a change.
  expect_rejected(key_, nonce_, {}, ct, tag, "aad removed", 0);
  expect_rejected(key_, nonce_, ByteView(aad_).first(kAadSize - 1), ct, tag, "aad shortened", 0);
  expect_rejected(key_, nonce_, aad_, ByteView(ct).first(ct.size() - 1), tag, "ct shortened", 0);

  // After all the failures the untouched message still opens (no stuck state in the backend).
  Bytes opened(ct.size());
  ASSERT_EQ(crypto().aes128_gcm_open(key_, nonce_, aad_, ct, tag, opened), Error::ok);
  EXPECT_EQ(opened, plaintext_);
}

// McGrew-Viega test case 1: all-zero key and nonce, no plaintext, no AAD (GMAC of nothing).
TEST_P(Aead, ZeroLengthPlaintextKnownAnswer) {
  const Bytes key(kAeadKeySize, 0);
  const AeadNonce nonce;
  AeadTag tag;
  ASSERT_EQ(crypto().aes128_gcm_seal(key, nonce, {}, {}, {}, tag), Error::ok);
  EXPECT_EQ(to_hex(tag.view()), "58e2fccefa7e3061367f1d57a4e7455a");
  EXPECT_EQ(crypto().aes128_gcm_open(key, nonce, {}, {}, tag, {}), Error::ok);
}

TEST_P(Aead, ZeroLengthPlaintextWithAad) {
  AeadTag tag;
  ASSERT_EQ(crypto().aes128_gcm_seal(key_, nonce_, aad_, {}, {}, tag), Error::ok);
  EXPECT_EQ(crypto().aes128_gcm_open(key_, nonce_, aad_, {}, tag, {}), Error::ok);
  // The tag still authenticates the AAD.
  Bytes changed = aad_;
  flip(changed, 0);
  EXPECT_EQ(crypto().aes128_gcm_open(key_, nonce_, changed, {}, tag, {}), Error::auth_failed);
  Bytes bad_tag = to_bytes(tag.view());
  flip(bad_tag, 127);
  EXPECT_EQ(crypto().aes128_gcm_open(key_, nonce_, aad_, {}, tag_of(bad_tag), {}),
            Error::auth_failed);
}

TEST_P(Aead, InPlaceSealAndOpen) {
  Bytes expected_ct(plaintext_.size());
  AeadTag expected_tag;
  ASSERT_EQ(crypto().aes128_gcm_seal(key_, nonce_, aad_, plaintext_, expected_ct, expected_tag),
            Error::ok);

  Bytes buffer = plaintext_;
  AeadTag tag;
  ASSERT_EQ(crypto().aes128_gcm_seal(key_, nonce_, aad_, buffer, buffer, tag), Error::ok);
  EXPECT_EQ(buffer, expected_ct);
  EXPECT_TRUE(tag.equals(expected_tag));

  ASSERT_EQ(crypto().aes128_gcm_open(key_, nonce_, aad_, buffer, tag, buffer), Error::ok);
  EXPECT_EQ(buffer, plaintext_);

  // In place with a bad tag: the buffer (then holding unauthenticated plaintext) is zeroed.
  ASSERT_EQ(crypto().aes128_gcm_seal(key_, nonce_, aad_, buffer, buffer, tag), Error::ok);
  Bytes bad_tag = to_bytes(tag.view());
  flip(bad_tag, 5);
  EXPECT_EQ(crypto().aes128_gcm_open(key_, nonce_, aad_, buffer, tag_of(bad_tag), buffer),
            Error::auth_failed);
  EXPECT_TRUE(all_zero(buffer));
}

TEST_P(Aead, PartiallyOverlappingBuffersAreRefused) {
  Bytes buffer(plaintext_.size() + 1, 0x11);
  const ByteView in = ByteView(buffer).first(plaintext_.size());
  const MutableByteView out = MutableByteView(buffer).subspan(1);
  AeadTag tag = tag_of(Bytes(kTagSize, 0xA5));
  EXPECT_EQ(crypto().aes128_gcm_seal(key_, nonce_, aad_, in, out, tag), Error::invalid_argument);
  EXPECT_TRUE(all_zero(tag.view()));
  EXPECT_EQ(crypto().aes128_gcm_open(key_, nonce_, aad_, in, tag, out), Error::invalid_argument);
}

// The backends keep the two most recent AES keys installed and re-key only for another key.
// Interleave keys that differ in one bit, and seals with opens, and compare every result with a
// fresh backend's. (Eviction of a third key: key_state_test.cpp.)
TEST_P(Aead, KeyChangesTakeEffect) {
  Bytes other_key = key_;
  flip(other_key, 8 * kAeadKeySize - 1);
  const Bytes* keys[] = {&key_, &other_key, &key_, &key_, &other_key, &other_key, &key_};
  for (std::size_t i = 0; i < std::size(keys); ++i) {
    SCOPED_TRACE(::testing::Message() << "step " << i);
    const Bytes& key = *keys[i];
    AnyBackend fresh(GetParam());
    ASSERT_TRUE(fresh.ready());
    Bytes expected_ct(plaintext_.size());
    AeadTag expected_tag;
    ASSERT_EQ(fresh.get().aes128_gcm_seal(key, nonce_, aad_, plaintext_, expected_ct, expected_tag),
              Error::ok);

    Bytes ct(plaintext_.size());
    AeadTag tag;
    ASSERT_EQ(crypto().aes128_gcm_seal(key, nonce_, aad_, plaintext_, ct, tag), Error::ok);
    EXPECT_EQ(ct, expected_ct);
    EXPECT_TRUE(tag.equals(expected_tag));

    Bytes opened(ct.size());
    ASSERT_EQ(crypto().aes128_gcm_open(key, nonce_, aad_, ct, tag, opened), Error::ok);
    EXPECT_EQ(opened, plaintext_);
    // The message does not open under the other key.
    const Bytes& wrong = (&key == &key_) ? other_key : key_;
    EXPECT_EQ(crypto().aes128_gcm_open(wrong, nonce_, aad_, ct, tag, opened), Error::auth_failed);
  }
}

DSEKP_INSTANTIATE_FOR_BOTH_BACKENDS(Aead);

}  // namespace
}  // namespace dsekp::test
