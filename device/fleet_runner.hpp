// `dsekp device` as a library call: options in, exit code out (docs/DEVICE.md; the CLI contract
// is section 1 of the issue-4 interface notes). Loads the credentials, opens the client logs,
// runs the fleet (mqtt_fleet.hpp), writes the summary to stderr and --summary-json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "device/device_agent.hpp"

namespace dsekp::device {

enum class ProgressMode : std::uint8_t { automatic, on, off };

struct FleetOptions {
  std::string broker;  // HOST:PORT
  Mode mode = Mode::dsekp;
  Encoding encoding = Encoding::json;
  std::filesystem::path credentials;
  std::optional<std::uint64_t> devices;  // default: all in the file
  std::uint64_t count = 0;               // 0: until --duration-s or a signal
  std::uint32_t interval_ms = 2000;
  double duration_s = 0;
  std::filesystem::path logs_dir;  // empty: no logs
  /// Where devices provisioned to ratchet keep their secrets (device/secret_file.hpp); created
  /// 0700. Required when the credentials hold such a device.
  std::filesystem::path ratchet_dir;
  std::uint32_t reset_every = 0;
  double reset_prob = 0;
  std::uint64_t seed = 1;
  int qos = 1;
  double connect_rate = 500;
  std::optional<std::uint32_t> rekey_at_seq;
  std::filesystem::path summary_json;
  ProgressMode progress = ProgressMode::automatic;
  bool anonymous = false;
  // Ours, beyond the contract.
  int keepalive_s = 60;
  std::uint32_t drain_timeout_ms = 10'000;
  std::uint32_t give_up_s = 60;
  std::uint32_t max_handshake_failures = 3;
  std::uint32_t retransmit_initial_ms = 1000;
  std::uint32_t retransmit_max_ms = 60'000;
  std::uint32_t init_max_age_ms = 120'000;
};

/// Exit codes (the contract's).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

/// Checks value ranges and combinations that the parser cannot (e.g. resets in PSK mode); the
/// message of the first problem, or empty.
[[nodiscard]] std::string validate_options(const FleetOptions& options);

/// Runs the whole command; returns the exit code. Never throws: every error is printed on
/// stderr as "dsekp device: ..." with its exit code (2 for bad options or credentials).
int run_device_fleet(const FleetOptions& options) noexcept;

}  // namespace dsekp::device
