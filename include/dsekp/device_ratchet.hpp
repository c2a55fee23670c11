// The device side of the ratchet (v1.2, PROTOCOL.md 6.6): at every authentic ACK the device's
// long-term secret is replaced by the next one, stored through the application's SecretStore
// before the new session starts, so that a secret taken from the device later cannot recompute
// the sessions before it.
//
// A DeviceSession in ratchet mode holds a pointer to one (DeviceConfig::ratchet) and calls it
// through virtual functions only: a firmware that never constructs a DeviceRatchet does not link
// the ratchet's code (the SDK's flash budget, docs/FIRMWARE.md), and a device that does not
// ratchet keeps none of its state.
#pragma once

#include <cstdint>

#include "dsekp/crypto.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"
#include "dsekp/key_schedule.hpp"
#include "dsekp/spec.hpp"

namespace dsekp {

struct DeviceCredentials;

/// Where a ratcheting device keeps its long-term secret: the firmware's non-volatile storage.
/// Called once per established session, before the session starts.
class SecretStore {
 public:
  /// Replaces the stored secret and epoch with these. Returns true only once the write can no
  /// longer be lost, by a power cut included, and no copy of the replaced secret remains in the
  /// storage; false leaves the old pair in place (the ACK is then not taken).
  [[nodiscard]] virtual bool store_secret(const DevSecret& secret,
                                          std::uint32_t epoch) noexcept = 0;

 protected:
  ~SecretStore() = default;  // never deleted through this interface
};

class DeviceRatchet {
 public:
  /// `store` must outlive this object. One DeviceRatchet per device.
  explicit DeviceRatchet(SecretStore& store) noexcept;
  DeviceRatchet(const DeviceRatchet&) = delete;
  DeviceRatchet& operator=(const DeviceRatchet&) = delete;
  // Not virtual: the class has no base and is never deleted through a pointer (a virtual one
  // would pull operator delete into a firmware).
  ~DeviceRatchet() = default;

  /// On an authentic ACK, before the session starts: derives the next secret, stores it with the
  /// next epoch and only then replaces `credentials`' secret and epoch with them, keeping K_rekey
  /// of the replaced secret. secret_store_failed (the store refused) or the backend's error leave
  /// `credentials` as they were.
  [[nodiscard]] virtual Error step(CryptoBackend& crypto, DeviceCredentials& credentials) noexcept;

  /// Whether `request` carries the proof of K_rekey of the secret before the last step (an edge
  /// that has not seen the step's confirmation yet holds that one). false before any step.
  [[nodiscard]] virtual bool is_previous_secrets_request(CryptoBackend& crypto,
                                                         const RekeyFrame& request) noexcept;

 private:
  SecretStore& store_;
  bool has_previous_rekey_key_ = false;
  ProofKey previous_rekey_key_;  // K_rekey of the secret before the last step; opens no session
};

}  // namespace dsekp
