// One simulated device: the paper's ESP32 client (sections 3.3, 4) over the protocol core, without
// the network. The fleet's event loop (mqtt_fleet.hpp) owns the MQTT connection and drives the
// agent with the time: on_link_ready / on_link_lost, on_message, on_publish_acked and step(),
// which does whatever is due and returns when it wants to be called again.
//
// DSEKP: at boot draw a new session (DeviceSession::start_handshake) and send the INIT; resend the
// same bytes whenever the core says retransmit_due (its exponential backoff); an INIT that
// expired (handshake_expired) is logged as timeout (or rejected, if an ACK came that failed
// verification) and a new handshake starts; after `max_handshake_failures` such handshakes in a
// row the device gives up. On a verified ACK the first DATA frame goes out at once (key
// confirmation), then one every interval. When rekey_due() a new handshake runs while the old
// session keeps sending; so does an authenticated REKEY request from the edge (it lost the
// session: the device rekeys at once instead of sending frames the edge refuses). A reset (reboot)
// destroys the DeviceSession, as a power cycle loses RAM, and starts a new handshake: new sessctr,
// seq from 0. The MQTT connection is kept across a reset (see docs/DEVICE.md). Within one run a
// device never reuses a sessctr, reboots included (the analysis identifies packets by dev_id,
// sessctr and seq). PSK: the paper's baseline; seq counts from 0, one frame every interval. The
// first publish of each device (INIT or first PSK frame) is delayed by a start offset drawn
// uniformly from [0, interval) so that a fleet does not send in lockstep.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "device/client_logs.hpp"
#include "device/credentials.hpp"
#include "device/fleet_counters.hpp"
#include "device/secret_file.hpp"
#include "device/sensor_model.hpp"
#include "device/sim_random.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/mode.hpp"

namespace dsekp::device {

inline constexpr std::uint64_t kNever = UINT64_MAX;

struct AgentConfig {
  Mode mode = Mode::dsekp;
  Encoding encoding = Encoding::json;
  int qos = 1;
  std::uint64_t count = 0;  // DATA frames to send; 0 = no limit
  std::uint32_t interval_ms = 2000;
  std::uint32_t reset_every = 0;  // reboot after every K frames since boot; 0 = never
  double reset_prob = 0;          // reboot after a frame with this probability
  std::uint32_t max_handshake_failures = 3;
  DeviceConfig session;  // rekey_at_seq, retransmission timing, INIT lifetime
  /// Where devices provisioned with "ratchet": true keep their secrets (secret_file.hpp);
  /// required when there is one.
  std::filesystem::path ratchet_dir;
  SensorSpec sensor = dht11();
  std::uint64_t seed = 1;
};

/// Where an agent's MQTT publishes go (the fleet's connection for this device).
class Publisher {
 public:
  /// Publishes; true and the message id on success.
  virtual bool publish(const std::string& topic, ByteView payload, int qos, int& mid) = 0;

 protected:
  Publisher() = default;
  ~Publisher() = default;
  Publisher(const Publisher&) = default;
  Publisher& operator=(const Publisher&) = default;
};

/// Shared by every agent of a run; the log writers are null when no logs are written.
struct AgentContext {
  Rng* rng = nullptr;  // the protocol's randomness (OS-seeded DRBG)
  FleetCounters* counters = nullptr;
  ClientLogWriter* data_log = nullptr;
  HandshakeLogWriter* handshake_log = nullptr;
};

/// Unix time from the system clock (the device's NTP-synchronised clock).
std::uint64_t unix_time_us() noexcept;

class DeviceAgent {
 public:
  /// `device`, `config`, `context` and `publisher` must outlive the agent. `index` (the device's
  /// position in the fleet) selects its streams of the seeded simulation randomness.
  DeviceAgent(const ProvisionedDevice& device, std::uint64_t index, const AgentConfig& config,
              const AgentContext& context, Publisher& publisher);
  DeviceAgent(const DeviceAgent&) = delete;
  DeviceAgent& operator=(const DeviceAgent&) = delete;

  /// The MQTT link can carry publishes (connected, and for DSEKP subscribed).
  void on_link_ready(std::uint64_t now_ms);
  void on_link_lost();
  void on_message(std::string_view topic, ByteView payload);
  void on_publish_acked(int mid);

  /// Does what is due at `now_ms` (monotonic ms); returns the next time it has work (kNever:
  /// none until an event).
  std::uint64_t step(std::uint64_t now_ms);

  /// No more publishes from now on (end of run).
  void stop() noexcept { stopped_ = true; }
  /// At the end of the run: a handshake still open is logged as timeout.
  void close_open_handshake();
  /// The device stops for good (e.g. its broker login is refused); counted once.
  void give_up(std::string reason);

  [[nodiscard]] bool done() const noexcept { return config_.count > 0 && sent_ >= config_.count; }
  [[nodiscard]] bool failed() const noexcept { return !failure_.empty(); }
  [[nodiscard]] const std::string& failure() const noexcept { return failure_; }
  [[nodiscard]] std::size_t unacked() const noexcept { return unacked_mids_.size(); }
  [[nodiscard]] std::uint64_t sent() const noexcept { return sent_; }
  [[nodiscard]] bool ever_established() const noexcept { return ever_established_; }
  [[nodiscard]] std::string_view dev_id() const noexcept {
    return device_.credentials.dev_id.str();
  }

 private:
  struct OpenHandshake {
    bool open = false;
    std::uint16_t sessctr = 0;
    std::uint64_t first_sent_ms = 0;  // Unix ms
    std::uint32_t attempts = 0;
    bool bad_ack_seen = false;
  };

  bool step_once(std::uint64_t now_ms);
  std::uint64_t next_wake(std::uint64_t now_ms) const;
  void boot(std::uint64_t now_ms);
  void reboot(std::uint64_t now_ms);
  void start_handshake();
  void send_init(std::uint64_t now_ms);
  void end_handshake(HandshakeOutcome outcome, std::optional<std::uint64_t> ack_ms);
  void send_data(std::uint64_t now_ms);
  void after_data(std::uint64_t now_ms);
  void handle_ack(ByteView payload);
  void handle_downlink(ByteView payload);
  void handle_rekey(ByteView payload);
  void schedule_next_data(std::uint64_t now_ms, bool off_schedule);

  const ProvisionedDevice& device_;
  const AgentConfig& config_;
  AgentContext context_;
  Publisher& publisher_;

  MbedtlsCrypto crypto_;  // one per device: it caches the keys of this device's session
  std::optional<FileSecretStore> secret_store_;  // ratchet mode only
  std::optional<DeviceRatchet> ratchet_;         // ratchet mode: new at each boot (RAM)
  std::optional<DeviceSession> session_;
  SensorModel sensor_;
  SimRandom events_;  // reset draws

  std::uint64_t start_offset_ms_;
  bool ready_ = false;
  bool first_ready_seen_ = false;
  bool booted_ = false;
  std::uint64_t last_step_ms_ = 0;  // the clock of the latest step(), for messages between
  bool stopped_ = false;
  bool ever_established_ = false;
  std::uint64_t boot_at_ms_ = 0;
  std::uint64_t next_data_ms_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t frames_since_boot_ = 0;
  std::uint32_t psk_seq_ = 0;
  std::uint32_t failed_handshakes_ = 0;  // in a row
  OpenHandshake handshake_;
  std::vector<std::uint8_t> init_wire_;       // the outstanding INIT, resent bytes-identical
  std::vector<int> unacked_mids_;             // QoS 1 DATA publishes awaiting PUBACK
  std::vector<std::uint16_t> used_sessctrs_;  // this run's sessions (see start_handshake)
  // `t` of the latest INIT, kept across simulated reboots as a device keeps it in flash: the
  // edge refuses a `t` that is not greater than the last it accepted.
  std::uint32_t last_init_t_ = 0;
  std::string failure_;
};

}  // namespace dsekp::device
