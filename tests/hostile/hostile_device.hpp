// A device for the hostile-input tests: the protocol core's real DeviceSession (OpenSSL backend,
// seeded RNG) with a DeviceConfig of the test's choosing (clockless or not), turning frames
// into wire bytes and wire bytes back into verdicts exactly as a device on the broker would.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"
#include "crypto/testing/seeded_rng.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::hostile {

using Bytes = std::vector<std::uint8_t>;

inline std::string as_string(const Bytes& b) {
  return std::string(b.begin(), b.end());
}
inline ByteView bytes_of(std::string_view text) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

template <typename Frame>
std::string wire(const Frame& frame, Encoding enc) {
  Bytes out(kMaxFrameSize);
  std::size_t n = 0;
  if (encode(frame, enc, out, n) != Error::ok) return {};
  return std::string(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n));
}

class HostileDevice {
 public:
  HostileDevice(const edge::DeviceMaterial& material, std::uint64_t seed,
                const DeviceConfig& config = {});

  [[nodiscard]] std::string dev_id() const { return std::string(session_.dev_id().str()); }
  [[nodiscard]] DeviceSession& session() noexcept { return session_; }

  /// A new handshake at device time (or counter) `t`; `frame` receives it before encoding.
  std::string init(std::uint32_t t, Encoding enc, InitFrame* frame = nullptr);
  /// Feeds an ACK payload: the decoder's or DeviceSession::handle_ack's verdict.
  Error take_ack(std::string_view payload);
  /// Seals the next DATA frame; Error::ok or the reason (e.g. no_session) in `error`.
  std::string data(std::string_view reading, std::uint64_t sendts_ms, Encoding enc,
                   DataFrame* frame = nullptr, Error* error = nullptr);

 private:
  OpenSslCrypto crypto_;
  SeededRng rng_;
  DeviceSession session_;
};

}  // namespace dsekp::hostile
