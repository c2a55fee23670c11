// `dsekp bench edge`: how fast the edge processes telemetry compared with what the broker itself
// relays, on one private Mosquitto on loopback (issue 3, "Measurements").
//
// Three runs of the same N messages through the same broker, one publisher sending them all at
// QoS 1 without waiting (frames generated beforehand, so the publisher is not the bottleneck):
//   raw   a plain subscriber receives the messages (the DSEKP frames' bytes on another topic, so
//         the same sizes): what the broker + libmosquitto deliver with no crypto and no storage;
//   dsekp the edge (`dsekp edge`, a child process) handles N DATA frames of established sessions;
//   psk   the edge handles N PSK baseline frames.
// Each rate is N / (time from the first publish to the last message received, or to the edge's
// telemetry table holding all N). An edge run counts only when the table holds exactly N new
// rows (zero loss). The edge runs as configured in production except that republish is off
// (it would add a second message per frame to the same broker) and the metrics are on a private
// port, from which the mean per-frame processing time (decrypt + SQLite commit + CSV) is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dsekp::bench::edge {

struct EdgeBenchOptions {
  std::size_t count = 20000;  // messages per run
  std::size_t devices = 10;   // DSEKP/PSK devices the frames are spread over (round-robin)
  bool compact = false;       // wire encoding of the frames (default JSON, the paper's)
  bool csv = true;            // the edge writes the server CSV logs (its default)
  std::string dsekp_exe;      // the `dsekp` executable that runs `edge`
  std::string mosquitto;      // the broker executable
  double timeout_s = 300;     // per run
  bool keep_dir = false;      // keep the work directory (logs, databases) for inspection
  std::size_t batch_max = 0;  // the edge's --batch-max; 0: its default
};

struct RunFigures {
  std::size_t messages = 0;   // published (and acknowledged by the broker)
  std::size_t delivered = 0;  // received by the subscriber / logged by the edge
  double seconds = 0;
  double rate = 0;                // delivered messages per second; 0 if the run did not complete
  bool complete = false;          // delivered == messages within the timeout (and not more)
  double mean_processing_us = 0;  // edge runs: mean of dsekp_frame_processing_seconds
};

struct EdgeBenchResult {
  RunFigures raw, dsekp, psk;
  double dsekp_frame_bytes = 0;  // mean wire size
  double psk_frame_bytes = 0;
  double ratio_dsekp = 0;  // dsekp.rate / raw.rate
  double ratio_psk = 0;
  static constexpr double kTarget = 0.9;
  bool target_met = false;  // ratio_dsekp >= kTarget and the DSEKP run lost nothing
  double load_before[3] = {0, 0, 0};
  double load_after[3] = {0, 0, 0};
  unsigned cpus = 0;
  std::string work_dir;  // kept only with keep_dir
};

/// Runs the three measurements; throws std::runtime_error on a set-up failure (no broker, the
/// edge does not start, a handshake fails).
EdgeBenchResult run_edge_bench(const EdgeBenchOptions& options);

}  // namespace dsekp::bench::edge
