// Known-answer tests from the specifications, run against both backends: RFC 5869 A.1-A.3
// (HKDF-SHA256, PRK and OKM), RFC 4231 test cases 1-7 (HMAC-SHA256) and the McGrew-Viega GCM
// spec test cases 2-4 (AES-128-GCM). Values as in the project's vetted vector file.
#include <array>
#include <string_view>

#include "crypto_test_util.hpp"
#include "rfc5869_vectors.hpp"

namespace dsekp::test {
namespace {

struct HmacCase {
  int number;
  std::string_view key, data, mac;  // `mac` may be a truncation (case 5: leftmost 16 bytes)
};

// 131 bytes of 0xaa, the key of test cases 6 and 7.
constexpr std::string_view kAa131 =
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

const HmacCase kRfc4231[] = {
    {1, "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
    {2, "4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
    {3, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
     "dddddddd",
     "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
    {4, "0102030405060708090a0b0c0d0e0f10111213141516171819",
     "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
     "cdcdcdcd",
     "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
    {5, "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "546573742057697468205472756e636174696f6e",
     "a3b6167473100ee06e0c796c2955552b"},
    {6, kAa131,
     "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b"
     "6579204669727374",
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
    {7, kAa131,
     "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a6520"
     "6b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579"
     "206e6565647320746f20626520686173686564206265666f7265206265696e6720757365642062792074686520484"
     "d"
     "414320616c676f726974686d2e",
     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
};

struct GcmCase {
  int number;
  std::string_view key, plaintext, iv, aad, ciphertext, tag;
};

const GcmCase kMcGrewViega[] = {
    {2, "00000000000000000000000000000000", "00000000000000000000000000000000",
     "000000000000000000000000", "", "0388dace60b6a392f328c2b971b2fe78",
     "ab6e47d42cec13bdf53a67b21257bddf"},
    {3, "feffe9928665731c6d6a8f9467308308",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b"
     "5"
     "25b16aedf5aa0de657ba637b391aafd255",
     "cafebabefacedbaddecaf888", "",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84a"
     "a"
     "051ba30b396a0aac973d58e091473f5985",
     "4d5c2af327cd64a62cf35abd2ba6fab4"},
    {4, "feffe9928665731c6d6a8f9467308308",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b"
     "5"
     "25b16aedf5aa0de657ba637b39",
     "cafebabefacedbaddecaf888", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84a"
     "a"
     "051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
};

class RfcVectors : public BackendTest {};

TEST_P(RfcVectors, Rfc5869HkdfSha256) {
  for (const HkdfCase& tc : kRfc5869) {
    SCOPED_TRACE(tc.name);
    const Bytes ikm = hex(tc.ikm), salt = hex(tc.salt), info = hex(tc.info);
    const ByteView ikm_parts[] = {ikm};
    std::array<std::uint8_t, kHashSize> prk{};
    ASSERT_EQ(crypto().hkdf_extract(salt, ikm_parts, prk), Error::ok);
    EXPECT_EQ(to_hex(prk), tc.prk);

    Bytes okm(tc.length);
    const ByteView info_parts[] = {info};
    ASSERT_EQ(crypto().hkdf_expand(prk, info_parts, okm), Error::ok);
    EXPECT_EQ(to_hex(okm), tc.okm);
  }
}

// The same vectors with IKM and info split into several parts (some empty): the result must not
// depend on how the caller splits its input.
TEST_P(RfcVectors, Rfc5869HkdfSha256MultiPart) {
  for (const HkdfCase& tc : kRfc5869) {
    SCOPED_TRACE(tc.name);
    const Bytes ikm = hex(tc.ikm), salt = hex(tc.salt), info = hex(tc.info);
    const ByteView ikm_view(ikm), info_view(info);
    const ByteView ikm_parts[] = {
        ikm_view.first(5), {}, ikm_view.subspan(5, 7), ikm_view.subspan(12)};
    std::array<std::uint8_t, kHashSize> prk{};
    ASSERT_EQ(crypto().hkdf_extract(salt, ikm_parts, prk), Error::ok);
    EXPECT_EQ(to_hex(prk), tc.prk);

    const std::size_t cut = info.size() / 3;
    const ByteView info_parts[] = {info_view.first(cut), info_view.subspan(cut), {}};
    Bytes okm(tc.length);
    ASSERT_EQ(crypto().hkdf_expand(prk, info_parts, okm), Error::ok);
    EXPECT_EQ(to_hex(okm), tc.okm);

    // A prefix of the output is the OKM of a shorter L (one block, and part of one).
    Bytes short_okm(20);
    ASSERT_EQ(crypto().hkdf_expand(prk, info_parts, short_okm), Error::ok);
    EXPECT_EQ(to_hex(short_okm), tc.okm.substr(0, 40));
  }
}

TEST_P(RfcVectors, Rfc4231HmacSha256) {
  for (const HmacCase& tc : kRfc4231) {
    SCOPED_TRACE(::testing::Message() << "RFC 4231 test case " << tc.number);
    const Bytes key = hex(tc.key), data = hex(tc.data), expected = hex(tc.mac);
    const ByteView parts[] = {data};
    Sha256Digest mac;
    ASSERT_EQ(crypto().hmac_sha256(key, parts, mac), Error::ok);
    // Case 5 publishes only the leftmost 128 bits; the others the full 256.
    EXPECT_EQ(to_hex(mac.view().first(expected.size())), tc.mac);
  }
}

// Every two-part split of test case 7's 152-byte message, plus empty parts, gives the same MAC.
TEST_P(RfcVectors, Rfc4231HmacSha256EverySplit) {
  const HmacCase& tc = kRfc4231[6];
  const Bytes key = hex(tc.key), data = hex(tc.data);
  const ByteView all(data);
  for (std::size_t cut = 0; cut <= data.size(); ++cut) {
    const ByteView parts[] = {{}, all.first(cut), {}, all.subspan(cut)};
    Sha256Digest mac;
    ASSERT_EQ(crypto().hmac_sha256(key, parts, mac), Error::ok);
    ASSERT_EQ(to_hex(mac.view()), tc.mac) << "split at " << cut;
  }
}

TEST_P(RfcVectors, McGrewViegaAes128Gcm) {
  for (const GcmCase& tc : kMcGrewViega) {
    SCOPED_TRACE(::testing::Message() << "GCM spec test case " << tc.number);
    const Bytes key = hex(tc.key), pt = hex(tc.plaintext), aad = hex(tc.aad);
    const AeadNonce nonce = nonce_of(hex(tc.iv));

    Bytes ct(pt.size());
    AeadTag tag;
    ASSERT_EQ(crypto().aes128_gcm_seal(key, nonce, aad, pt, ct, tag), Error::ok);
    EXPECT_EQ(to_hex(ct), tc.ciphertext);
    EXPECT_EQ(to_hex(tag.view()), tc.tag);

    const Bytes expected_ct = hex(tc.ciphertext);
    Bytes opened(expected_ct.size(), 0xA5);
    ASSERT_EQ(crypto().aes128_gcm_open(key, nonce, aad, expected_ct, tag_of(hex(tc.tag)), opened),
              Error::ok);
    EXPECT_EQ(opened, pt);
  }
}

DSEKP_INSTANTIATE_FOR_BOTH_BACKENDS(RfcVectors);

}  // namespace
}  // namespace dsekp::test
