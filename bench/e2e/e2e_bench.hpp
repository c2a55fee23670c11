// `dsekp bench e2e`: PSK against DSEKP end to end, in one run on one broker and one edge, at a
// fixed moderate load (docs/PERFORMANCE.md, "End to end on loopback").
//
// Steps: provision the fleet and the probe identities; start a private Mosquitto and
// `dsekp edge` (INIT rate limit off, so that the probe's back-to-back handshakes are not
// refused); probe N handshakes on the idle edge; run the PSK fleet (`dsekp device --mode psk`,
// D devices x F frames every T ms), wait until the edge has logged what the broker acknowledged
// and join the client and server logs by frame into microsecond latencies (latency_join.hpp);
// the same for the DSEKP fleet with the same settings. With --rounds R the PSK and DSEKP runs
// alternate R times (PSK, DSEKP, PSK, DSEKP, ...) and each mode's frames are pooled, so that a
// change in the machine's load during the measurement falls on both modes alike; each round's
// p50s are reported too. Then a last fleet, DSEKP again with the same settings and its client
// logs set aside, only as load: once it is in its steady state (10 % of its frames logged) the
// probe times N handshakes again, under that load. The probe gets its own load run so that its
// handshakes do not add to the load the measured DSEKP frames see (the PSK frames had none).
// Then stop everything and judge the targets.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench_rig.hpp"
#include "figures.hpp"
#include "latency_join.hpp"

namespace dsekp::bench::e2e {

struct E2eOptions {
  std::size_t devices = 100;
  std::uint64_t frames = 100;      // DATA frames per device and mode
  std::uint32_t interval_ms = 50;  // per device: 100 devices every 50 ms = 2,000 frames/s
  std::size_t rounds = 1;          // alternating PSK/DSEKP runs per mode
  std::size_t handshakes = 500;    // probe handshakes, idle and again under load (0: no probe and
                                   // no load run)
  std::string encoding = "json";
  int qos = 1;
  std::uint32_t batch_wait_ms = 0;  // the edge's --batch-wait-ms
  std::string mqtt_client;          // the edge's --mqtt-client; empty: its default
  std::uint64_t seed = 1;
  std::string dir;    // working folder (new or empty); empty: a temporary one, removed at the end
  bool keep = false;  // keep the temporary folder
  std::string dsekp_exe;  // empty: this program
  std::string mosquitto;  // empty: found on the system
};

/// A mode's fleet runs (one per round) and what their logs say, pooled.
struct ModeFigures {
  std::string mode;  // "psk" | "dsekp"
  std::vector<FleetRun> fleets;
  JoinResult join;  // latency_us, idle_latency_us emptied after the percentiles are taken
  Percentiles latency_us;
  Percentiles idle_edge_latency_us;  // the frames that found the edge idle (latency_join.hpp)
  /// The edge's CPU time (user + system, /proc) from the fleet's start until the edge had logged
  /// its frames, and that per frame logged: what the mode costs the edge, handshakes included.
  std::optional<double> edge_cpu_s;
  std::uint64_t edge_frames = 0;
  std::optional<double> edge_cpu_us_per_frame;
};

struct ProbeFigures {
  std::string phase;  // "idle" | "under load"
  std::size_t attempted = 0, ok = 0, timeouts = 0;
  double wall_s = 0;
  Percentiles latency_us;
  bool overlapped_load = false;  // under load: the DSEKP fleet was still sending when it ended
};

/// One round's PSK and DSEKP p50 latency.
struct RoundFigures {
  std::optional<double> psk_p50_us, dsekp_p50_us;
};

struct E2eResult {
  E2eOptions options;
  std::string dir;
  bool dir_removed = false;
  std::string mosquitto_version;
  MachineLoad load_before, load_after;
  double wall_s = 0;
  ModeFigures psk, dsekp;
  std::vector<RoundFigures> rounds;
  ProbeFigures probe_idle, probe_loaded;
  FleetRun load_fleet;  // the DSEKP fleet the loaded probe ran beside
  /// The fleet's own handshakes from client_handshakes_dsekp.csv (millisecond columns).
  std::size_t fleet_handshakes = 0, fleet_handshakes_ok = 0;
  Percentiles fleet_handshake_ms;
  std::vector<Target> targets;
  std::vector<std::string> commands;
  std::vector<std::string> problems;
};

/// Runs the measurement. Throws experiment::Interrupted on SIGINT/SIGTERM/SIGHUP (an
/// experiment::InterruptGuard must be in place), std::invalid_argument for bad options and
/// std::runtime_error when a step fails; every child is stopped in all cases.
E2eResult run_e2e(const E2eOptions& options, const std::function<void(const std::string&)>& say);

/// Checks option values; the first problem, or empty.
std::string validate(const E2eOptions& options);

}  // namespace dsekp::bench::e2e
