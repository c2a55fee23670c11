// Shared set-up for protocol tests: a device and an edge on chosen crypto backends, provisioned
// with the same credentials, and helpers that carry frames through the wire codecs.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "crypto/testing/seeded_rng.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/edge_session.hpp"

namespace dsekp::testing {

enum class Backend { openssl, mbedtls };

/// Owns one instance of each backend; `get` picks one (backends are used by reference only).
class Backends {
 public:
  CryptoBackend& get(Backend b) {
    if (b == Backend::openssl) return openssl_;
    return mbedtls_;
  }

 private:
  OpenSslCrypto openssl_;
  MbedtlsCrypto mbedtls_;
};

inline const char* backend_name(Backend b) {
  return b == Backend::openssl ? "openssl" : "mbedtls";
}

struct BackendPair {
  Backend device;
  Backend edge;
};

/// Every pairing: same backend on both sides, and each cross-backend direction.
inline auto all_backend_pairs() {
  return ::testing::Values(BackendPair{Backend::openssl, Backend::openssl},
                           BackendPair{Backend::mbedtls, Backend::mbedtls},
                           BackendPair{Backend::mbedtls, Backend::openssl},
                           BackendPair{Backend::openssl, Backend::mbedtls});
}

inline std::string pair_name(const ::testing::TestParamInfo<BackendPair>& info) {
  return std::string("device_") + backend_name(info.param.device) + "_edge_" +
         backend_name(info.param.edge);
}

inline ByteView as_bytes(const std::string& s) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

inline std::string as_string(ByteView b) {
  return std::string(b.begin(), b.end());
}

/// Fixed provisioning used by every protocol test.
inline DeviceCredentials make_credentials(const std::string& dev_id = "esp32-01",
                                          std::uint8_t secret_fill = 0x11) {
  DeviceCredentials c;
  EXPECT_EQ(c.dev_id.assign(dev_id), Error::ok);
  std::array<std::uint8_t, kDevSecretSize> secret{};
  secret.fill(secret_fill);
  c.dev_secret = DevSecret::from(secret);
  std::vector<std::uint8_t> salt(16, 0x5A);
  EXPECT_EQ(c.edge_salt.assign(salt), Error::ok);
  return c;
}

inline EdgeConfig make_edge_config(const DeviceCredentials& c) {
  EdgeConfig config;
  config.edge_salt = c.edge_salt;
  return config;
}

/// Sends a frame through the encoder and decoder of `enc`, as the broker would carry it.
template <typename Frame, typename Decode>
Frame over_the_wire(const Frame& f, Encoding enc, Decode decode) {
  std::vector<std::uint8_t> buf(kMaxFrameSize);
  std::size_t n = 0;
  EXPECT_EQ(encode(f, enc, buf, n), Error::ok);
  Frame out;
  EXPECT_EQ(decode(ByteView(buf.data(), n), out), Error::ok);
  return out;
}

inline InitFrame wire(const InitFrame& f, Encoding enc) {
  return over_the_wire(f, enc, [](ByteView w, InitFrame& o) { return decode_init(w, o); });
}
inline AckFrame wire(const AckFrame& f, Encoding enc) {
  return over_the_wire(f, enc, [](ByteView w, AckFrame& o) { return decode_ack(w, o); });
}
inline DataFrame wire(const DataFrame& f, Encoding enc) {
  const Direction d = f.direction;
  return over_the_wire(f, enc, [d](ByteView w, DataFrame& o) { return decode_data(w, d, o); });
}

inline constexpr std::uint32_t kNowS = 1'764'460'800;  // 2025-11-30T00:00:00Z
inline constexpr std::uint64_t kNowMs = std::uint64_t{kNowS} * 1000;

/// A device-side and an edge-side backend (each party its own instances), one provisioned
/// device, an edge and that device's edge state, with seeded randomness on both sides.
class ProtocolTest : public ::testing::TestWithParam<BackendPair> {
 protected:
  ProtocolTest()
      : device_crypto_(device_side_.get(GetParam().device)),
        edge_crypto_(edge_side_.get(GetParam().edge)),
        credentials_(make_credentials()),
        edge_(edge_crypto_, make_edge_config(credentials_)) {}

  /// The edge's answer to `init` at `now_ms`.
  Error accept_init(const InitFrame& init, std::uint64_t now_ms, InitOutcome& out) {
    return edge_.handle_init(init, credentials_.dev_secret, state_, now_ms, edge_rng_, out);
  }

  Backends device_side_;
  Backends edge_side_;
  CryptoBackend& device_crypto_;
  CryptoBackend& edge_crypto_;
  DeviceCredentials credentials_;
  EdgeProtocol edge_;
  EdgeDeviceState state_;
  SeededRng device_rng_{1};
  SeededRng edge_rng_{2};
};

}  // namespace dsekp::testing
