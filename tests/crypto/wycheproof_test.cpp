// Wycheproof vectors (C2SP/wycheproof testvectors_v1, copied into tests/vectors/wycheproof with
// their LICENSE and SOURCE.md) run against both backends: AES-GCM, HKDF-SHA256, HMAC-SHA256.
// Each test prints how many cases it ran and skipped, and asserts those counts, so a parser that
// silently matches nothing cannot pass.
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "crypto_test_util.hpp"

#ifndef DSEKP_WYCHEPROOF_DIR
#error "DSEKP_WYCHEPROOF_DIR must name the directory of the Wycheproof JSON files"
#endif

namespace dsekp::test {
namespace {

using nlohmann::json;

json load(const std::string& file) {
  const std::string path = std::string(DSEKP_WYCHEPROOF_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot open " << path;
    return json::object();
  }
  return json::parse(in);
}

Bytes hex_field(const json& test, const char* field) {
  return hex(test.at(field).get<std::string>());
}

class Wycheproof : public BackendTest {};

// AES-GCM. The interface is AES-128 with a 96-bit nonce and a 128-bit tag, so:
// - groups with keySize 128, ivSize 96, tagSize 128 run in full (valid, invalid and acceptable);
// - groups with ivSize 96 and tagSize 128 but a 192- or 256-bit key are expressible: each of their
//   cases must be refused with invalid_argument (the backend must not silently use AES-192/256);
// - groups with any other ivSize (0, 8..80, 120..2056 bits) cannot be expressed at all (AeadNonce
//   is exactly 12 bytes): counted as skipped, with that reason. This includes the zero-length-IV
//   cases (CVE-2017-7822), which the type makes impossible.
TEST_P(Wycheproof, AesGcm) {
  const json doc = load("aes_gcm_test.json");
  int valid = 0, invalid = 0, acceptable = 0, key_size_refused = 0;
  std::map<std::string, int> skipped;
  int total = 0;
  for (const json& group : doc.at("testGroups")) {
    const int key_bits = group.at("keySize").get<int>();
    const int iv_bits = group.at("ivSize").get<int>();
    const int tag_bits = group.at("tagSize").get<int>();
    for (const json& test : group.at("tests")) {
      ++total;
      const int id = test.at("tcId").get<int>();
      SCOPED_TRACE(::testing::Message() << "aes_gcm tcId " << id);
      if (iv_bits != 96) {
        ++skipped["nonce is not 96 bits (AeadNonce is 12 bytes)"];
        continue;
      }
      if (tag_bits != 128) {
        ++skipped["tag is not 128 bits (AeadTag is 16 bytes)"];
        continue;
      }
      const Bytes key = hex_field(test, "key"), aad = hex_field(test, "aad");
      const Bytes msg = hex_field(test, "msg"), ct = hex_field(test, "ct");
      const AeadNonce nonce = nonce_of(hex_field(test, "iv"));
      const AeadTag tag = tag_of(hex_field(test, "tag"));
      const std::string result = test.at("result").get<std::string>();

      if (key_bits != 128) {
        Bytes out(msg.size(), 0xA5);
        AeadTag out_tag = tag_of(Bytes(kTagSize, 0xA5));
        EXPECT_EQ(crypto().aes128_gcm_seal(key, nonce, aad, msg, out, out_tag),
                  Error::invalid_argument);
        EXPECT_TRUE(all_zero(out) && all_zero(out_tag.view()));
        Bytes opened(ct.size(), 0xA5);
        EXPECT_EQ(crypto().aes128_gcm_open(key, nonce, aad, ct, tag, opened),
                  Error::invalid_argument);
        EXPECT_TRUE(all_zero(opened));
        ++key_size_refused;
        continue;
      }

      Bytes opened(ct.size(), 0xA5);
      const Error open_result = crypto().aes128_gcm_open(key, nonce, aad, ct, tag, opened);
      if (result == "valid") {
        ++valid;
        Bytes sealed(msg.size());
        AeadTag sealed_tag;
        ASSERT_EQ(crypto().aes128_gcm_seal(key, nonce, aad, msg, sealed, sealed_tag), Error::ok);
        EXPECT_EQ(sealed, ct);
        EXPECT_TRUE(sealed_tag.equals(tag));
        ASSERT_EQ(open_result, Error::ok);
        EXPECT_EQ(opened, msg);
      } else if (result == "invalid") {
        ++invalid;
        EXPECT_EQ(open_result, Error::auth_failed);
        EXPECT_TRUE(all_zero(opened)) << "plaintext of a rejected message left in the output";
      } else {
        ASSERT_EQ(result, "acceptable");
        ++acceptable;
        if (open_result == Error::ok) {
          EXPECT_EQ(opened, msg);
        } else {
          EXPECT_TRUE(all_zero(opened));
        }
      }
    }
  }
  int skipped_total = 0;
  std::cout << "[wycheproof] aes_gcm_test.json backend=" << crypto().name()
            << " run=" << valid + invalid + acceptable << " (valid " << valid << ", invalid "
            << invalid << ", acceptable " << acceptable << ")"
            << " key_size_refused=" << key_size_refused;
  for (const auto& [reason, count] : skipped) {
    std::cout << " skipped[" << reason << "]=" << count;
    skipped_total += count;
  }
  std::cout << "\n";
  // Counts of the committed file (see tests/vectors/wycheproof/SOURCE.md): group 1 is the only
  // AES-128 / 96-bit-IV group, tcIds 1-67.
  EXPECT_EQ(total, doc.at("numberOfTests").get<int>());
  EXPECT_EQ(valid, 40);
  EXPECT_EQ(invalid, 27);
  EXPECT_EQ(acceptable, 0);
  EXPECT_EQ(key_size_refused, 130);
  EXPECT_EQ(skipped_total, 119);
  EXPECT_EQ(valid + invalid + acceptable + key_size_refused + skipped_total, total);
}

// HKDF-SHA256: every case. `size` is L in bytes; the invalid cases ask for L = 8161 > 255 * 32,
// which hkdf_expand must refuse with invalid_argument and a zeroed output.
TEST_P(Wycheproof, HkdfSha256) {
  const json doc = load("hkdf_sha256_test.json");
  int valid = 0, invalid = 0, acceptable = 0;
  for (const json& group : doc.at("testGroups")) {
    for (const json& test : group.at("tests")) {
      const int id = test.at("tcId").get<int>();
      SCOPED_TRACE(::testing::Message() << "hkdf tcId " << id);
      const Bytes ikm = hex_field(test, "ikm"), salt = hex_field(test, "salt");
      const Bytes info = hex_field(test, "info"), expected = hex_field(test, "okm");
      const std::string result = test.at("result").get<std::string>();
      const ByteView ikm_parts[] = {ikm};
      const ByteView info_parts[] = {info};

      std::array<std::uint8_t, kHashSize> prk{};
      ASSERT_EQ(crypto().hkdf_extract(salt, ikm_parts, prk), Error::ok);
      Bytes okm(test.at("size").get<std::size_t>(), 0xA5);
      const Error e = crypto().hkdf_expand(prk, info_parts, okm);
      if (result == "valid") {
        ++valid;
        ASSERT_EQ(e, Error::ok);
        EXPECT_EQ(okm, expected);
      } else if (result == "invalid") {
        ++invalid;
        EXPECT_EQ(e, Error::invalid_argument);
        EXPECT_TRUE(all_zero(okm));
      } else {
        ASSERT_EQ(result, "acceptable");
        ++acceptable;
        if (e == Error::ok) {
          EXPECT_EQ(okm, expected);
        }
      }
    }
  }
  std::cout << "[wycheproof] hkdf_sha256_test.json backend=" << crypto().name()
            << " run=" << valid + invalid + acceptable << " (valid " << valid << ", invalid "
            << invalid << ", acceptable " << acceptable << ") skipped=0\n";
  EXPECT_EQ(valid, 83);
  EXPECT_EQ(invalid, 3);
  EXPECT_EQ(acceptable, 0);
  EXPECT_EQ(valid + invalid + acceptable, doc.at("numberOfTests").get<int>());
}

// HMAC-SHA256: every case, including the groups with 128-bit (truncated) tags: the first
// tagSize/8 bytes of the MAC are compared, in constant time as a verifier would.
TEST_P(Wycheproof, HmacSha256) {
  const json doc = load("hmac_sha256_test.json");
  int valid = 0, invalid = 0, acceptable = 0, truncated = 0;
  for (const json& group : doc.at("testGroups")) {
    const std::size_t tag_bytes = group.at("tagSize").get<std::size_t>() / 8;
    ASSERT_LE(tag_bytes, kHashSize);
    for (const json& test : group.at("tests")) {
      const int id = test.at("tcId").get<int>();
      SCOPED_TRACE(::testing::Message() << "hmac tcId " << id);
      const Bytes key = hex_field(test, "key"), msg = hex_field(test, "msg");
      const Bytes tag = hex_field(test, "tag");
      const std::string result = test.at("result").get<std::string>();
      const ByteView parts[] = {msg};

      Sha256Digest mac;
      ASSERT_EQ(crypto().hmac_sha256(key, parts, mac), Error::ok);
      const bool matches = constant_time_equal(mac.view().first(tag_bytes), tag);
      if (tag_bytes < kHashSize) ++truncated;
      if (result == "valid") {
        ++valid;
        EXPECT_TRUE(matches) << "MAC " << to_hex(mac.view()) << " expected " << to_hex(tag);
      } else if (result == "invalid") {
        ++invalid;
        EXPECT_FALSE(matches) << "a modified tag verified";
      } else {
        ASSERT_EQ(result, "acceptable");
        ++acceptable;
      }
    }
  }
  std::cout << "[wycheproof] hmac_sha256_test.json backend=" << crypto().name()
            << " run=" << valid + invalid + acceptable << " (valid " << valid << ", invalid "
            << invalid << ", acceptable " << acceptable << "; " << truncated
            << " with 128-bit tags) skipped=0\n";
  EXPECT_EQ(valid, 66);
  EXPECT_EQ(invalid, 108);
  EXPECT_EQ(truncated, 87);
  EXPECT_EQ(valid + invalid + acceptable, doc.at("numberOfTests").get<int>());
}

DSEKP_INSTANTIATE_FOR_BOTH_BACKENDS(Wycheproof);

}  // namespace
}  // namespace dsekp::test
