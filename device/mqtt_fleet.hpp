// N simulated devices in one process: one non-blocking libmosquitto client per device (its own
// connection, client id and login) and one event loop over all of them. No thread per device
// and no mosquitto_loop_start: epoll tells which sockets are readable or writable, the loop
// calls mosquitto_loop_read / mosquitto_loop_write for those clients, mosquitto_loop_misc for
// every client once a second (keepalive), and each device's DeviceAgent at the time it asked
// for (a min-heap of wake-up times).
//
// Connections open at `connect_rate` per second. A lost connection is re-opened after 1 s,
// doubling to 30 s; a device that cannot connect for `give_up_ms` gives up, and so does one
// whose login or subscriptions the broker refuses. A DSEKP device subscribes to its ACK and
// downlink topics and is "ready" (may publish) only after the SUBACK; a PSK device is ready
// on CONNACK. Sessions are clean (clean_session = true): the device state lives in the agent.
//
// The run ends when every device has sent its frames (or gave up), when the duration elapsed,
// or on SIGINT/SIGTERM (a second signal cuts the drain short). Then the loop drains: it waits
// up to `drain_timeout_ms` (2 s after a signal) for the PUBACKs of frames in flight, sends
// DISCONNECT on every connection and logs handshakes still open as timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/device_agent.hpp"
#include "device/progress_line.hpp"

namespace dsekp::device {

struct FleetLoopOptions {
  std::string broker_host = "127.0.0.1";
  std::uint16_t broker_port = 1883;
  bool anonymous = false;  // ignore the logins in the credentials
  int keepalive_s = 60;
  double connect_rate = 500;      // new connections per second
  std::uint64_t duration_ms = 0;  // 0: no limit
  std::uint32_t drain_timeout_ms = 10'000;
  std::uint32_t give_up_ms = 60'000;  // without a connection
  bool progress = false;
  std::uint64_t expected_frames = 0;  // for the progress line's ETA
};

enum class EndReason : std::uint8_t { completed, duration, interrupted };

struct FleetResult {
  EndReason reason = EndReason::completed;
  double duration_s = 0;
  std::optional<double> connect_s;      // until every device was first ready
  std::uint64_t never_established = 0;  // DSEKP devices that never completed a handshake
  std::vector<std::string> failures;    // "dev_id: reason", the first few
  bool drain_complete = false;          // every DATA frame acknowledged at the end
  bool all_done = false;                // every device sent its count
};

/// Whether a mosquitto_publish() that returned `rc` leaves the message on its way to the broker.
/// libmosquitto 2.0.11 (lib/actions.c, lib/messages_mosq.c) queues a QoS 1 or 2 message before
/// it first tries to send it; when that send fails (the connection died a moment ago) the call
/// returns the error but keeps the message and sends it again when the same client reconnects.
/// Counting such a frame as failed made a frame appear at the edge that the client log never had.
/// Errors returned before the queueing (bad arguments, sizes) send nothing. MOSQ_ERR_NOMEM is
/// either (before the queueing, or building the packet after it); it counts as not sent.
[[nodiscard]] bool publish_reaches_the_broker(int rc, int qos) noexcept;

class MqttFleet {
 public:
  /// Creates one client per device (no connection yet). Throws std::runtime_error if the
  /// client library cannot create a client.
  MqttFleet(const std::vector<ProvisionedDevice>& devices, const AgentConfig& agent_config,
            const AgentContext& context, const FleetLoopOptions& options);
  ~MqttFleet();
  MqttFleet(const MqttFleet&) = delete;
  MqttFleet& operator=(const MqttFleet&) = delete;

  /// Runs until the end (see above). `flush_logs` is called about once a second.
  FleetResult run(const std::function<void()>& flush_logs);

  struct Slot;

 private:
  void start_connect(Slot& s, std::uint64_t now_ms);
  void service(Slot& s, std::uint64_t now_ms);
  void sync_epoll(Slot& s);
  void reschedule(Slot& s, std::uint64_t due);
  void note_finished(Slot& s);
  void report_failure(const Slot& s);
  void tick(std::uint64_t now_ms);
  void begin_drain(EndReason reason, std::uint64_t now_ms);
  void begin_close(std::uint64_t now_ms);
  [[nodiscard]] std::uint64_t open_sockets() const;

  friend struct SlotCallbacks;

  const AgentConfig& agent_config_;
  AgentContext context_;
  FleetLoopOptions options_;
  std::vector<std::unique_ptr<Slot>> slots_;
  struct Timers;
  std::unique_ptr<Timers> timers_;
  int epoll_fd_ = -1;

  std::uint64_t start_ms_ = 0;
  std::uint64_t ready_devices_ = 0;  // ever ready
  std::uint64_t connected_now_ = 0;
  std::uint64_t finished_ = 0;  // done or gave up
  std::optional<std::uint64_t> all_ready_ms_;
  std::vector<std::string> failures_;
  enum class Phase : std::uint8_t { running, draining, closing } phase_ = Phase::running;
  EndReason reason_ = EndReason::completed;
  std::uint64_t phase_deadline_ms_ = 0;
};

/// Monotonic milliseconds (scheduling; never the wall clock).
std::uint64_t monotonic_ms() noexcept;

}  // namespace dsekp::device
