// What the benchmarks that drive a real edge share: a device of the registry (its session with
// the edge and its PSK key), the wire bytes of its frames and the readings they carry.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/psk_baseline.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/text_encoding.hpp"

namespace dsekp::bench {

using Frame = std::vector<std::uint8_t>;

/// `frame` encoded as `enc`; throws if it cannot be.
template <typename F>
Frame encode_frame(const F& frame, Encoding enc) {
  Frame wire(kMaxFrameSize);
  std::size_t n = 0;
  if (encode(frame, enc, wire, n) != Error::ok) throw std::runtime_error("cannot encode a frame");
  wire.resize(n);
  return wire;
}

/// A device provisioned in the edge's registry: its session with the edge and its PSK key.
struct BenchDevice {
  BenchDevice(CryptoBackend& crypto, const ::dsekp::edge::DeviceMaterial& m)
      : psk_key(m.credentials.psk_key.clone()), session(crypto, credentials_of(m)) {}
  static DeviceCredentials credentials_of(const ::dsekp::edge::DeviceMaterial& m) {
    DeviceCredentials c;
    c.dev_id = m.credentials.dev_id;
    c.dev_secret = m.credentials.dev_secret.clone();
    c.edge_salt = m.edge_salt;
    return c;
  }
  PskKey psk_key;
  DeviceSession session;
};

/// The DSEKP and the PSK frame of each of the readings first .. first + count - 1 (distinct
/// JSON readings, reading i sent by device i % devices.size(), each device's frames in
/// sequence), appended to `dsekp` and `psk`; throws if one cannot be sealed.
inline void seal_frames(std::vector<std::unique_ptr<BenchDevice>>& devices, CryptoBackend& crypto,
                        Rng& rng, std::size_t first, std::size_t count, std::uint64_t sendts_ms,
                        Encoding enc, std::vector<Frame>& dsekp, std::vector<Frame>& psk) {
  dsekp.reserve(dsekp.size() + count);
  psk.reserve(psk.size() + count);
  for (std::size_t i = first; i < first + count; ++i) {
    BenchDevice& dev = *devices[i % devices.size()];
    const std::string reading = R"({"t":21.5,"h":40.0,"i":)" + std::to_string(i) + "}";
    const ByteView plaintext = ::dsekp::edge::bytes_of(reading);
    DataFrame data;
    if (dev.session.seal(plaintext, sendts_ms, data) != Error::ok)
      throw std::runtime_error("cannot seal frame " + std::to_string(i));
    dsekp.push_back(encode_frame(data, enc));
    PskFrame frame;
    if (psk_seal(crypto, dev.psk_key, dev.session.dev_id(),
                 static_cast<std::uint32_t>(i / devices.size()), sendts_ms, plaintext, rng,
                 frame) != Error::ok)
      throw std::runtime_error("cannot seal PSK frame " + std::to_string(i));
    psk.push_back(encode_frame(frame, enc));
  }
}

}  // namespace dsekp::bench
