// The fixed provisioning every DSEKP benchmark uses (dev_id esp32-01, like the paper's device).
// Benchmarks only: the secret is a constant.
#pragma once

#include <array>
#include <stdexcept>
#include <string>

#include "dsekp/device_session.hpp"

namespace dsekp::bench {

inline void require(Error e, const char* step) {
  if (e != Error::ok) throw std::runtime_error(std::string(step) + ": " + error_name(e));
}

inline DeviceCredentials bench_credentials(const std::string& dev_id = "esp32-01") {
  DeviceCredentials c;
  require(c.dev_id.assign(dev_id), "dev_id");
  std::array<std::uint8_t, kDevSecretSize> secret{};
  secret.fill(0x11);
  c.dev_secret = DevSecret::from(secret);
  std::array<std::uint8_t, 16> salt{};
  salt.fill(0x5A);
  require(c.edge_salt.assign(salt), "salt");
  return c;
}

}  // namespace dsekp::bench
