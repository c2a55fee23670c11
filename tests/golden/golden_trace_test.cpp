// The committed golden trace (tests/vectors/golden_trace_v1.json) is what both backends compute.
// A change here means the wire format or key schedule changed: that is a protocol change.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "golden_trace.hpp"

namespace dsekp::golden {
namespace {

nlohmann::ordered_json committed() {
  std::ifstream in(std::string(DSEKP_TEST_DATA_DIR) + "/golden_trace_v1.json");
  EXPECT_TRUE(in.good());
  return nlohmann::ordered_json::parse(in);
}

void expect_matches_committed(CryptoBackend& crypto) {
  const auto expected = committed()["trace"];
  const Trace trace = compute_golden_trace(crypto);
  ASSERT_EQ(trace.size(), expected.size());
  std::size_t i = 0;
  for (const auto& [name, value] : expected.items()) {
    EXPECT_EQ(trace[i].first, name) << "entry " << i;
    EXPECT_EQ(trace[i].second, value.get<std::string>()) << name;
    ++i;
  }
}

TEST(GoldenTrace, OpenSslMatchesCommittedVectors) {
  OpenSslCrypto crypto;
  expect_matches_committed(crypto);
}

TEST(GoldenTrace, MbedtlsMatchesCommittedVectors) {
  MbedtlsCrypto crypto;
  expect_matches_committed(crypto);
}

TEST(GoldenTrace, ReferenceReadingFitsTheCompactTarget) {
  const auto trace = committed()["trace"];
  EXPECT_LE(trace["data0_compact"].get<std::string>().size() / 2, 64u);
}

}  // namespace
}  // namespace dsekp::golden
