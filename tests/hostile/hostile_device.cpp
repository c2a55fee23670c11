// HostileDevice (see hostile_device.hpp).
#include "hostile_device.hpp"

namespace dsekp::hostile {
namespace {

DeviceCredentials credentials_of(const edge::DeviceMaterial& material) {
  DeviceCredentials c;
  c.dev_id = material.credentials.dev_id;
  c.dev_secret = material.credentials.dev_secret.clone();
  c.edge_salt = material.edge_salt;
  return c;
}

}  // namespace

HostileDevice::HostileDevice(const edge::DeviceMaterial& material, std::uint64_t seed,
                             const DeviceConfig& config)
    : rng_(seed), session_(crypto_, credentials_of(material), config) {}

std::string HostileDevice::init(std::uint32_t t, Encoding enc, InitFrame* frame) {
  InitFrame f;
  if (session_.start_handshake(t, rng_, f) != Error::ok) return {};
  if (session_.note_init_sent(std::uint64_t{t} * 1000, rng_) != Error::ok) return {};
  if (frame != nullptr) *frame = f;
  return wire(f, enc);
}

Error HostileDevice::take_ack(std::string_view payload) {
  AckFrame ack;
  if (const Error e = decode_ack(bytes_of(payload), ack); e != Error::ok) return e;
  return session_.handle_ack(ack);
}

std::string HostileDevice::data(std::string_view reading, std::uint64_t sendts_ms, Encoding enc,
                                DataFrame* frame, Error* error) {
  DataFrame f;
  const Error e = session_.seal(bytes_of(reading), sendts_ms, f);
  if (error != nullptr) *error = e;
  if (e != Error::ok) return {};
  if (frame != nullptr) *frame = f;
  return wire(f, enc);
}

}  // namespace dsekp::hostile
