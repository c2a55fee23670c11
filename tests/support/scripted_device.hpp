// A device for the EdgeService tests: the real dsekp::DeviceSession (and the PSK baseline) on its
// own OpenSSL backend and seeded RNG, provisioned from the registry's material, producing and
// consuming wire bytes exactly as a device on the broker would.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"
#include "crypto/testing/seeded_rng.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/psk_baseline.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::edge::testing {

using Bytes = std::vector<std::uint8_t>;

inline constexpr std::uint32_t kNowS = 1'764'460'800;  // 2025-11-30T00:00:00Z
inline constexpr std::uint64_t kNowMs = std::uint64_t{kNowS} * 1000;

inline ByteView bytes_of(std::string_view text) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

inline std::string text_of(ByteView bytes) {
  return std::string(bytes.begin(), bytes.end());
}

template <typename Frame>
Bytes encoded(const Frame& frame, Encoding enc) {
  Bytes wire(kMaxFrameSize);
  std::size_t n = 0;
  EXPECT_EQ(encode(frame, enc, wire, n), Error::ok);
  wire.resize(n);
  return wire;
}

inline dsekp::DeviceCredentials device_credentials(const DeviceMaterial& material) {
  dsekp::DeviceCredentials c;
  c.dev_id = material.credentials.dev_id;
  c.dev_secret = material.credentials.dev_secret.clone();
  c.edge_salt = material.edge_salt;
  return c;
}

class ScriptedDevice {
 public:
  ScriptedDevice(const DeviceMaterial& material, std::uint64_t seed)
      : rng_(seed),
        psk_key_(material.credentials.psk_key.clone()),
        session_(crypto_, device_credentials(material)) {}
  /// A device booted from `credentials` (a ratcheting device: what its storage holds) with
  /// `config`; no PSK key.
  ScriptedDevice(const dsekp::DeviceCredentials& credentials, const DeviceConfig& config,
                 std::uint64_t seed)
      : rng_(seed), session_(crypto_, credentials, config) {}

  [[nodiscard]] const DevId& dev_id() const noexcept { return session_.dev_id(); }
  [[nodiscard]] DeviceSession& session() noexcept { return session_; }

  /// A new handshake's INIT at device time `now_s`.
  Bytes init(Encoding enc, std::uint32_t now_s = kNowS) {
    InitFrame frame;
    EXPECT_EQ(session_.start_handshake(now_s, rng_, frame), Error::ok);
    EXPECT_EQ(session_.note_init_sent(std::uint64_t{now_s} * 1000, rng_), Error::ok);
    return encoded(frame, enc);
  }
  /// The outstanding INIT again, as a retransmission sends it.
  Bytes init_again(Encoding enc) { return encoded(session_.current_init(), enc); }

  /// Feeds an ACK payload to the device.
  Error take_ack(ByteView payload) {
    AckFrame ack;
    if (const Error e = decode_ack(payload, ack); e != Error::ok) return e;
    return session_.handle_ack(ack);
  }

  /// The next DATA frame carrying `reading`; `sealed` receives the frame before encoding.
  Bytes data(std::string_view reading, std::uint64_t sendts_ms, Encoding enc,
             DataFrame* sealed = nullptr) {
    DataFrame frame;
    EXPECT_EQ(session_.seal(bytes_of(reading), sendts_ms, frame), Error::ok);
    if (sealed != nullptr) *sealed = frame;
    return encoded(frame, enc);
  }

  /// Opens a downlink payload; the plaintext goes to `text`.
  Error open_down(ByteView payload, std::string& text) {
    DataFrame frame;
    if (const Error e = decode_data(payload, Direction::downlink, frame); e != Error::ok) return e;
    std::vector<std::uint8_t> plain(frame.ciphertext.size());
    std::size_t n = 0;
    const Error e = session_.open_downlink(frame, plain, n);
    text = text_of(ByteView(plain.data(), n));
    return e;
  }

  /// A PSK baseline frame (the baseline's seq is the caller's).
  Bytes psk(std::string_view reading, std::uint32_t seq, std::uint64_t sendts_ms, Encoding enc,
            PskFrame* sealed = nullptr) {
    PskFrame frame;
    EXPECT_EQ(psk_seal(crypto_, psk_key_, dev_id(), seq, sendts_ms, bytes_of(reading), rng_, frame),
              Error::ok);
    if (sealed != nullptr) *sealed = frame;
    return encoded(frame, enc);
  }

 private:
  OpenSslCrypto crypto_;
  SeededRng rng_;
  PskKey psk_key_;
  DeviceSession session_;
};

}  // namespace dsekp::edge::testing
