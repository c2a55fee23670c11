// Tests of the in-memory TLS 1.3 handshake benchmark (bench/tls_handshake.hpp).
//
// Why: the benchmark's numbers are only meaningful if each mode really is the key exchange it is
// named after and if a PSK mismatch fails instead of silently measuring another handshake. Timing
// values are not asserted (they depend on the machine), only that they are produced.
#include "tls_handshake.hpp"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace dsekp::bench {
namespace {

constexpr std::size_t kIterations = 5;

TlsBenchOptions quick_options() {
  TlsBenchOptions o;
  o.warmup_iterations = 2;
  return o;
}

// Named function rather than a lambda: gtest's macro already has a parameter called `info`.
std::string mode_test_name(const ::testing::TestParamInfo<TlsMode>& param) {
  return tls_mode_name(param.param);
}

class TlsModeTest : public ::testing::TestWithParam<TlsMode> {};

TEST_P(TlsModeTest, SingleVerifiedHandshakeSucceeds) {
  TlsHandshakeBench bench(quick_options());
  std::string error;
  EXPECT_TRUE(bench.run_once(GetParam(), &error)) << error;
  EXPECT_EQ(error, "");
}

TEST_P(TlsModeTest, StatsDescribeTheMode) {
  TlsHandshakeBench bench(quick_options());
  const TlsMode mode = GetParam();
  const TlsHandshakeStats s = bench.run(mode, kIterations);

  EXPECT_EQ(s.mode, mode);
  EXPECT_EQ(s.iterations, kIterations);
  EXPECT_GT(s.cpu_us_mean, 0.0);
  EXPECT_GT(s.cpu_us_median, 0.0);
  EXPECT_GT(s.cpu_us_min, 0.0);
  EXPECT_LE(s.cpu_us_min, s.cpu_us_median);
  EXPECT_LE(s.cpu_us_min, s.cpu_us_mean);

  switch (mode) {
    case TlsMode::ecdhe_x25519_p256_cert:
      EXPECT_EQ(s.negotiated_group, "X25519");
      EXPECT_FALSE(s.used_psk);
      EXPECT_TRUE(s.peer_verified);
      EXPECT_TRUE(s.server_sent_key_share);
      break;
    case TlsMode::psk_dhe_ke:
      EXPECT_EQ(s.negotiated_group, "X25519");
      EXPECT_TRUE(s.used_psk);
      EXPECT_FALSE(s.peer_verified);
      EXPECT_TRUE(s.server_sent_key_share);
      EXPECT_EQ(s.client_psk_kex_modes, "psk_dhe_ke");
      break;
    case TlsMode::psk_ke:
      EXPECT_EQ(s.negotiated_group, "none");
      EXPECT_TRUE(s.used_psk);
      EXPECT_FALSE(s.peer_verified);
      // The proof of psk_ke: the server's hello carries no key share.
      EXPECT_FALSE(s.server_sent_key_share);
      // Documented OpenSSL 3.0 limitation: the client cannot offer psk_ke alone.
      EXPECT_EQ(s.client_psk_kex_modes, "psk_dhe_ke,psk_ke");
      EXPECT_TRUE(s.client_sent_key_share);
      break;
  }
}

TEST_P(TlsModeTest, RepeatedRunsKeepWorking) {
  // The PSK sessions and contexts are shared by all handshakes; reuse must not degrade them.
  TlsHandshakeBench bench(quick_options());
  bench.run(GetParam(), kIterations);
  std::string error;
  EXPECT_TRUE(bench.run_once(GetParam(), &error)) << error;
}

INSTANTIATE_TEST_SUITE_P(AllModes, TlsModeTest,
                         ::testing::Values(TlsMode::ecdhe_x25519_p256_cert, TlsMode::psk_dhe_ke,
                                           TlsMode::psk_ke),
                         mode_test_name);

TlsBenchOptions mismatched_psk_options() {
  TlsBenchOptions o = quick_options();
  TlsPsk wrong{};
  wrong.fill(0xA5);  // the client's PSK is random, so this differs with overwhelming probability
  o.server_psk_override = wrong;
  return o;
}

class TlsWrongPskTest : public ::testing::TestWithParam<TlsMode> {};

TEST_P(TlsWrongPskTest, HandshakeFailsWithoutFallback) {
  TlsHandshakeBench bench(mismatched_psk_options());
  std::string error;
  EXPECT_FALSE(bench.run_once(GetParam(), &error));
  EXPECT_NE(error, "");
  EXPECT_THROW(bench.run(GetParam(), kIterations), std::runtime_error);
}

INSTANTIATE_TEST_SUITE_P(PskModes, TlsWrongPskTest,
                         ::testing::Values(TlsMode::psk_dhe_ke, TlsMode::psk_ke), mode_test_name);

TEST(TlsWrongPskTest, CertificateModeIsUnaffectedByThePsk) {
  // Shows the PSK-mode failures above come from the key mismatch, not a broken setup.
  TlsHandshakeBench bench(mismatched_psk_options());
  std::string error;
  EXPECT_TRUE(bench.run_once(TlsMode::ecdhe_x25519_p256_cert, &error)) << error;
}

TEST(TlsModeName, NamesAreStable) {
  EXPECT_STREQ(tls_mode_name(TlsMode::ecdhe_x25519_p256_cert), "tls13_x25519_p256_cert");
  EXPECT_STREQ(tls_mode_name(TlsMode::psk_dhe_ke), "tls13_psk_dhe_ke");
  EXPECT_STREQ(tls_mode_name(TlsMode::psk_ke), "tls13_psk_ke");
}

TEST(TlsHandshakeBench, ZeroIterationsIsRejected) {
  TlsHandshakeBench bench(quick_options());
  EXPECT_THROW(bench.run(TlsMode::psk_ke, 0), std::invalid_argument);
}

}  // namespace
}  // namespace dsekp::bench
