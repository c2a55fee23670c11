// The registry every daemon test starts from: a new registry file holding one device, whose
// provisioning material the test keeps to drive a scripted device.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "edge/registry/device_registry.hpp"

namespace dsekp::edge::testing {

/// Creates the registry at `path` if it is missing and adds `dev_id` (`ratchet`: a device that
/// ratchets its secret, PROTOCOL.md 6.6); `material` receives its keys.
inline ::testing::AssertionResult register_device(const std::string& path,
                                                  const std::string& dev_id,
                                                  DeviceMaterial& material, bool ratchet = false) {
  std::unique_ptr<DeviceRegistry> registry;
  const RegistryStatus opened = DeviceRegistry::open(path, OpenMode::create_if_missing, registry);
  if (!opened.ok())
    return ::testing::AssertionFailure() << "open " << path << ": " << opened.message();
  const RegistryStatus added = registry->add(dev_id, material, {}, ratchet);
  if (!added.ok())
    return ::testing::AssertionFailure() << "add " << dev_id << ": " << added.message();
  return ::testing::AssertionSuccess();
}

}  // namespace dsekp::edge::testing
