// What `dsekp keys add` / `rotate` / `show --reveal` print for a device: its provisioning material
// as JSON (for tools and the device simulator) or as a C header (for firmware).
//
// Both carry dev_id, DEV_SECRET, EDGE_SALT (as lowercase hex), the broker address and the
// device's broker login, and the topics the device uses. PSK_KEY and the psk topic only with
// MaterialMode::with_psk_baseline (the comparison experiment): a device that never holds the
// baseline's static key cannot be made to use it. The output is secret: whoever reads it can
// impersonate the device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "device_registry.hpp"
#include "registry_status.hpp"

namespace dsekp::edge {

struct BrokerAddress {
  std::string host = "localhost";
  std::uint16_t port = 1883;
};

/// Parses "HOST:PORT" ("[v6addr]:PORT" for IPv6). The host is limited to letters, digits, '.',
/// '-' and ':' (inside brackets) so that it can be pasted into a C string literal unescaped.
RegistryStatus parse_broker_address(std::string_view text, BrokerAddress& out);

enum class MaterialMode : std::uint8_t { dsekp_only, with_psk_baseline };

/// The material as one JSON object (pretty-printed, trailing newline).
[[nodiscard]] std::string material_json(const DeviceMaterial& material, const BrokerAddress& broker,
                                        MaterialMode mode = MaterialMode::dsekp_only);

/// The material as a self-contained C header (constants and byte arrays; C99 and C++).
[[nodiscard]] std::string material_c_header(const DeviceMaterial& material,
                                            const BrokerAddress& broker,
                                            MaterialMode mode = MaterialMode::dsekp_only);

}  // namespace dsekp::edge
