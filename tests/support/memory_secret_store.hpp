// A ratcheting device's non-volatile storage (dsekp::SecretStore, PROTOCOL.md 6.6) as a test
// sees it: what was written last, how often, and a switch that makes the next writes fail (a
// full or worn flash, a power cut during the write). read() is what the device boots from after
// a power cut, and what a thief who reads the flash gets.
#pragma once

#include "dsekp/device_session.hpp"

namespace dsekp::test {

class MemorySecretStore final : public SecretStore {
 public:
  bool store_secret(const DevSecret& secret, std::uint32_t epoch) noexcept override {
    if (fail_) return false;
    stored_ = secret.clone();
    epoch_ = epoch;
    ++writes_;
    return true;
  }

  /// The credentials a device provisioned with `provisioned` boots from now.
  [[nodiscard]] DeviceCredentials read(const DeviceCredentials& provisioned) const {
    DeviceCredentials c{provisioned.dev_id, provisioned.dev_secret.clone(), provisioned.edge_salt,
                        provisioned.epoch};
    if (writes_ > 0) {
      c.dev_secret = stored_.clone();
      c.epoch = epoch_;
    }
    return c;
  }
  void set_failing(bool fail) noexcept { fail_ = fail; }
  [[nodiscard]] int writes() const noexcept { return writes_; }

 private:
  DevSecret stored_;
  std::uint32_t epoch_ = 0;
  int writes_ = 0;
  bool fail_ = false;
};

}  // namespace dsekp::test
