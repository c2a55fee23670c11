// What the benchmarks that drive a real edge share: a device of the registry (its session with
// the edge and its PSK key) and the wire bytes of its frames.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/psk_baseline.hpp"
#include "edge/registry/device_registry.hpp"

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

inline ByteView view(const std::string& s) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
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

}  // namespace dsekp::bench
