// `dsekp bench pipeline`: what the edge's own work costs per DATA frame, without a broker or a
// transport (docs/PERFORMANCE.md, "The edge without its transport").
//
// In this process: a new registry with N devices, the edge's storage as the daemon opens it with
// its defaults (daemon/edge_storage.hpp: the SQLite state store, the telemetry table, the CSV
// logs unless csv is false), an EdgeService and a MessageBatch; each device handshakes through
// them; then per repetition and mode the frames are sealed (untimed) and handed to the batch
// `batch` at a time, each batch committed (MessageBatch::end), as the daemon does for a burst.
// Cost = this thread's CPU time (user + system: the SQLite and CSV writes are made on it) over
// the frames. What `dsekp bench edge` adds on top of this is the MQTT receive path.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dsekp::bench::pipeline {

struct PipelineBenchOptions {
  std::size_t count = 30000;    // DATA frames per mode and repetition
  std::size_t devices = 10;     // frames round-robin over them
  std::size_t batch = 256;      // messages per commit (the edge's --batch-max default)
  std::size_t repetitions = 3;  // DSEKP then PSK, this many times
  bool compact = false;         // wire encoding (default JSON, the paper's)
  bool csv = true;              // the server CSV logs (the edge's default)
};

struct PipelineFigures {
  std::vector<double> dsekp_us_per_frame;  // one per repetition
  std::vector<double> psk_us_per_frame;
  double dsekp_median = 0;
  double psk_median = 0;
  double dsekp_over_psk = 0;  // the median of the repetitions' own ratios
};

/// Runs the repetitions; throws std::runtime_error if a step fails or a frame is not accepted.
PipelineFigures run_pipeline_bench(const PipelineBenchOptions& options);

}  // namespace dsekp::bench::pipeline
