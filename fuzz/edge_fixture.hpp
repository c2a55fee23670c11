// The edge's surroundings for edge_service_fuzzer.cpp: a real device registry and a real SQLite
// session store in a private temporary directory, built once per fuzzing process, and a reset
// that forgets every device's session state between inputs (so that each input starts from the
// same edge, as libFuzzer requires: an input must mean the same thing whenever it runs).
//
// Determinism: the registry draws DEV_SECRET, PSK_KEY and EDGE_SALT from the OS CSPRNG. For the
// fuzzer they are overwritten once, right after provisioning, with fixed counting patterns
// (through SQLite, on the registry's documented schema, device_registry.hpp), so the frames a
// script produces are the same bytes in every run. Fuzzing only: never an edge's real keys.
#pragma once

#include <array>
#include <cstddef>
#include <memory>

#include "edge/registry/device_registry.hpp"
#include "edge/service/sqlite_credential_generations.hpp"
#include "edge/store/sqlite_session_store.hpp"

namespace dsekp::fuzz {

class EdgeFixture {
 public:
  /// Registered devices (esp32-01 ...), then one device that is NOT in the registry (its frames
  /// are well formed and correctly authenticated under keys the edge does not know).
  static constexpr std::size_t kRegistered = 3;
  static constexpr std::size_t kDevices = kRegistered + 1;
  /// The registered device that ratchets its secret (PROTOCOL.md 6.6): esp32-03.
  static constexpr std::size_t kRatcheting = 2;

  /// The process's fixture, created on first use (aborts if it cannot be built).
  static EdgeFixture& instance();

  [[nodiscard]] edge::DeviceRegistry& registry() noexcept { return *registry_; }
  [[nodiscard]] edge::SqliteSessionStore& store() noexcept { return *store_; }
  [[nodiscard]] edge::SqliteCredentialGenerations& generations() noexcept { return *generations_; }
  /// What device `i` (< kDevices) is provisioned with.
  [[nodiscard]] const edge::DeviceMaterial& material(std::size_t i) const noexcept {
    return materials_[i];
  }

  /// Deletes every device's stored state and credential record (one transaction).
  void reset();

 private:
  EdgeFixture();

  std::unique_ptr<edge::DeviceRegistry> registry_;
  std::unique_ptr<edge::SqliteSessionStore> store_;
  std::unique_ptr<edge::SqliteCredentialGenerations> generations_;
  std::array<edge::DeviceMaterial, kDevices> materials_;
};

}  // namespace dsekp::fuzz
