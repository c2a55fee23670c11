// `dsekp bench edge`: what the edge costs per DATA frame when it drains a backlog, and whether the
// broker or the edge is the bottleneck (docs/PERFORMANCE.md, "Edge throughput").
//
// One private Mosquitto on loopback. The edge (`dsekp edge`, a child process, its production
// defaults: persistent session, QoS 1, SQLite telemetry, CSV logs unless --no-csv; republish and
// metrics off) runs once for the handshakes and stops; then, per mode, N frames are queued in its
// persistent session while it is down, the edge is started again and drains them:
//   drain  the edge's wall time from the first frame it received (the rows' recvts_us) to the
//          moment its telemetry table holds all N; a run counts only with exactly N new rows;
//   cpu    the edge process' CPU time (user + system, from wait4 after it stopped) minus that of
//          an edge started and stopped with nothing queued (start-up and shutdown): over N.
// The broker's ceiling is the same backlog drained by a subscriber as light as the edge's own
// loop: an MQTT client the edge can run on (libmosquitto, edge/mqtt/, and the built-in one,
// edge/mqtt_builtin/; same batch size) with a handler that only counts, each in turn. The faster
// of the two rates is the denominator of the edge's ratio: a subscriber that does no work is
// woken for almost every message, so neither alone is sure to be the broker's pace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dsekp::bench::edge {

struct EdgeBenchOptions {
  std::size_t count = 20000;  // frames queued per drain
  std::size_t devices = 10;   // DSEKP/PSK devices the frames are spread over (round-robin)
  bool compact = false;       // wire encoding of the frames (default JSON, the paper's)
  bool csv = true;            // the edge writes the server CSV logs (its default)
  std::string dsekp_exe;      // the `dsekp` executable that runs `edge`
  std::string mosquitto;      // the broker executable
  double timeout_s = 300;     // per drain
  bool keep_dir = false;      // keep the work directory (logs, databases) for inspection
  std::size_t batch_max = 0;  // the edge's --batch-max; 0: its default
  std::optional<std::uint32_t> batch_wait_ms;  // the edge's --batch-wait-ms; unset: its default
  // Drains per mode, DSEKP and PSK alternating (PSK first in every second round, so that a
  // machine speeding up or slowing down during the run favours neither); the figures judged are
  // the medians over the rounds, and the ratio is the median of the rounds' own ratios.
  std::size_t rounds = 1;
  /// The edge's --mqtt-client; empty: the edge's default.
  std::string mqtt_client;
  /// Words put before the edge's command line in the drains only (e.g. `perf record -g --`), to
  /// profile them; the CPU figures then include the wrapper's.
  std::vector<std::string> drain_wrapper;
};

/// One drain of N queued messages.
struct DrainFigures {
  std::size_t messages = 0;   // queued (and acknowledged by the broker)
  std::size_t delivered = 0;  // received by the subscriber / stored by the edge
  bool complete = false;      // delivered == messages within the timeout (and not more)
  double seconds = 0;         // first message received -> last one received / stored
  double rate = 0;            // delivered / seconds; 0 if incomplete
  double cpu_s = 0;           // process CPU over the drain (see above): user + system
  double cpu_us_per_frame = 0;
  double user_us_per_frame = 0;    // of which in the process itself
  double system_us_per_frame = 0;  // and in the kernel on its behalf
  // Read- and write-type system calls as /proc/PID/io counts them (read, readv, pread, ... /
  // write, writev, pwrite, ...; not send(2) or recv(2): the built-in client's writes to the
  // broker are sends); not counted for an edge run under --drain-wrapper (/proc would count the
  // wrapper's).
  bool system_calls_counted = true;
  double reads_per_frame = 0;
  double writes_per_frame = 0;
};

struct ProcessCost;
/// Fills `r`'s rate and per-frame figures from its counts and the drain's process `cost`.
void finish_drain(DrainFigures& r, const ProcessCost& cost);

struct EdgeBenchResult {
  std::string mqtt_client;         // the edge's MQTT client
  DrainFigures broker;             // the light subscriber on libmosquitto
  DrainFigures broker_builtin;     // the light subscriber on the built-in client
  double broker_ceiling_rate = 0;  // the faster of the two: the broker's ceiling
  // The round whose CPU per frame is the median of the mode's rounds (the only one with 1).
  DrainFigures dsekp, psk;
  std::vector<DrainFigures> dsekp_rounds, psk_rounds;  // in the order they ran
  double idle_edge_cpu_s = 0;  // an edge started and stopped with nothing queued
  double dsekp_frame_bytes = 0;
  double psk_frame_bytes = 0;
  double ratio_dsekp = 0;                      // dsekp.rate / broker_ceiling_rate
  double ratio_psk = 0;                        // psk.rate / broker_ceiling_rate
  double cpu_dsekp_over_psk = 0;               // the median over the rounds of DSEKP CPU / PSK CPU
  static constexpr double kTargetCpuUs = 5.0;  // per DSEKP frame
  static constexpr double kTargetOverPsk = 1.1;  // DSEKP CPU / PSK CPU
  static constexpr double kTargetRatio = 0.9;    // edge rate / broker rate
  // Every drain (the ceilings' too) delivered all its frames; the targets are judged only then.
  bool complete = false;
  bool cpu_target_met = false;
  bool over_psk_target_met = false;
  bool ratio_target_met = false;
  double load_before[3] = {0, 0, 0};
  double load_after[3] = {0, 0, 0};
  unsigned cpus = 0;
  std::string work_dir;  // kept only with keep_dir
};

/// Runs the drains; throws std::runtime_error on a set-up failure (no broker, the edge does not
/// start, a handshake fails).
EdgeBenchResult run_edge_bench(const EdgeBenchOptions& options);

}  // namespace dsekp::bench::edge
