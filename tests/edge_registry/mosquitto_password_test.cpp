// Mosquitto "$7$" password hashes: a known answer produced by mosquitto_passwd 2.0.11 (Debian 12)
// with `mosquitto_passwd -c -b pw.txt alice secret123`, and the line format.
#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <array>
#include <regex>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/registry/mosquitto_password.hpp"

namespace dsekp::edge {
namespace {

std::vector<std::uint8_t> from_base64(const std::string& text) {
  std::vector<std::uint8_t> out(text.size());
  const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  std::size_t size = n > 0 ? static_cast<std::size_t>(n) : 0;
  // EVP_DecodeBlock counts padding as zero bytes: drop one per '='.
  for (auto it = text.rbegin(); it != text.rend() && *it == '='; ++it) --size;
  out.resize(size);
  return out;
}

TEST(MosquittoPassword, MatchesMosquittoPasswdOutput) {
  const std::string salt_b64 = "K4zMFPDxZv01y7qc";
  const std::string expected =
      "$7$101$K4zMFPDxZv01y7qc$i2iFLzcb/8Yv18CouwR/oNWtG6ZzRRWktSJyuw+0ZObUDZXrr+v0km5Qz/"
      "dT13alIT9gIAwAICTEcIi3lEz71Q==";
  const auto salt = from_base64(salt_b64);
  ASSERT_EQ(salt.size(), kMosquittoSaltSize);
  std::string hash;
  ASSERT_TRUE(mosquitto_password_hash("secret123", salt, 101, hash).ok());
  EXPECT_EQ(hash, expected);
}

TEST(MosquittoPassword, LinesHaveTheFormatAndFreshSalts) {
  OpenSslRng rng;
  std::string a;
  std::string b;
  ASSERT_TRUE(mosquitto_password_line("dev-1", "pw", rng, a).ok());
  ASSERT_TRUE(mosquitto_password_line("dev-1", "pw", rng, b).ok());
  const std::regex format(R"(dev-1:\$7\$101\$[A-Za-z0-9+/]{16}\$[A-Za-z0-9+/]{86}==\n)");
  EXPECT_TRUE(std::regex_match(a, format)) << a;
  EXPECT_NE(a, b);  // a new salt every time, so equal passwords do not show
}

TEST(MosquittoPassword, RefusesDegenerateParameters) {
  std::string hash;
  const std::array<std::uint8_t, 12> salt{};
  EXPECT_FALSE(mosquitto_password_hash("pw", salt, 0, hash).ok());
  EXPECT_FALSE(mosquitto_password_hash("pw", ByteView(), 101, hash).ok());
}

}  // namespace
}  // namespace dsekp::edge
