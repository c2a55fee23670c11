// A simulated device's non-volatile storage for its ratcheted secret (PROTOCOL.md 6.6): one file
// per device, `<dir>/<dev_id>.secret`, mode 0600, 44 bytes: u64 generation of the material the
// chain started from, u32 epoch (both big-endian), the 32-byte secret. No file, or one of another
// generation (the device was rotated: new material, a new chain): the device is on the secret it
// was provisioned with (epoch 0).
//
// A write is durable and all-or-nothing across a power cut: the new pair goes to a temporary file
// that is synced and renamed over the old one, then the directory is synced. The old file is then
// overwritten with zeros and synced before it is closed, so that its blocks do not keep the old
// secret on a file system that rewrites in place (ext4; a copy-on-write file system or an SSD's
// wear levelling may still keep old copies: PROTOCOL.md's non-claims).
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "dsekp/device_session.hpp"

namespace dsekp::device {

class SecretFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FileSecretStore final : public SecretStore {
 public:
  /// `generation`: the material's (ProvisionedDevice::generation).
  FileSecretStore(std::filesystem::path dir, const DevId& dev_id, std::uint64_t generation);

  /// Puts the stored secret and epoch into `credentials`; false, changing nothing, if nothing is
  /// stored for this generation. Throws SecretFileError for a file that cannot be read or has
  /// the wrong size.
  bool load(DeviceCredentials& credentials) const;

  bool store_secret(const DevSecret& secret, std::uint32_t epoch) noexcept override;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// Successful writes so far.
  [[nodiscard]] std::uint64_t writes() const noexcept { return writes_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path path_;
  std::uint64_t generation_;
  std::uint64_t writes_ = 0;
};

}  // namespace dsekp::device
