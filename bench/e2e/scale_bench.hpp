// `dsekp bench scale`: many simulated devices connected at once to one broker and one edge
// (default 10,000 DSEKP devices, each sending every 10 s, for 5 minutes), and what that costs the
// edge (docs/PERFORMANCE.md, "Scale: 10,000 devices").
//
// Steps: provision the devices; start a private Mosquitto and `dsekp edge` (default settings);
// sample the edge's and the broker's CPU time and memory from /proc every second
// (proc_sampler.hpp); run `dsekp device` for the connection ramp (devices / connect rate) plus
// the duration, so that every device sends for about the whole duration; wait until the edge has
// logged what the broker acknowledged; take the edge's final memory; stop everything; join the
// logs for the delivery ratio (latency_join.hpp, the same join as `dsekp bench e2e`).
//
// Several edges (`--edges N --store redis`, docs/SCALING.md "Measured: one to three edges"): a
// private redis-server (AOF on) holds the session state of N edges in one shared subscription
// group (`--shared-group bench`, MQTT 5; each edge with its own client id, state database, logs
// folder and `--replay-window 1024`). SQLite keeps its state per edge, so N > 1 needs Redis.
// Delivery is then the join of the client log with the union of the edges' server logs (a frame
// in two edges' logs counts as a duplicate: each must be there exactly once). With Redis the
// bench also reads Redis's command counters before the fleet and after the last frame was logged
// (redis_stats.hpp) and each edge's dsekp_store_round_trips_total (metrics_scrape.hpp), and
// samples Redis's CPU and memory beside the edges' and the broker's.
//
// A clustered tier (`--cluster`, docs/SCALING.md "Per-node costs"): three RabbitMQ nodes and a
// Redis Cluster of three primaries with a replica each replace Mosquitto and redis-server
// (bench_rig.hpp); the edges consume one quorum queue over AMQP and keep their state in the
// cluster; the devices are split into one fleet per broker node. Every node's CPU and memory is
// sampled on its own, Redis's counters are summed over the primaries (the replicas' are
// reported apart: they replay the primaries' writes), and each process class's cost is also
// given per 1,000 frames/s: the CPU seconds it used per frame times 1,000, i.e. the cores it
// used for every 1,000 frames/s at that load, fixed costs included (all on this one machine:
// the nodes share its cores, so the figures are costs, not capacities).
//
// Throughput: the frames the edges logged between the end of the connection ramp and the end of
// the sending, divided by that time, and how long the edges took after the sending to log the
// rest (a backlog: the offered load was above what they could handle).
//
// Soak (`--rss-every-s N`): a long run whose question is whether the edge's memory stays flat.
// Every N seconds one line `rss t_s=... edge_kb=... broker_kb=... edge_rows=...` goes to the
// progress output, and at the end the series is summarised after a warm-up (the first 10 % of
// the fleet's run, at least the connection ramp): first and last value, min, max and the
// least-squares slope. Growth of more than 10 % and 4 MiB from the first to the last sample after
// the warm-up is reported as a problem (an edge whose RSS creeps up over an hour leaks).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_rig.hpp"
#include "figures.hpp"
#include "latency_join.hpp"
#include "proc_sampler.hpp"
#include "redis_stats.hpp"

namespace dsekp::bench::e2e {

struct ScaleOptions {
  std::size_t devices = 10'000;
  std::uint32_t interval_ms = 10'000;
  double duration_s = 300;     // of sending, after the connection ramp
  double connect_rate = 500;   // new connections per second (the device's default)
  std::string mode = "dsekp";  // or psk
  std::string encoding = "json";
  int qos = 1;
  std::uint64_t seed = 1;
  std::string dir;
  bool keep = false;
  std::string dsekp_exe;
  std::string mosquitto;
  double rss_every_s = 0;        // 0: no RSS series
  std::size_t edges = 1;         // 1..3
  std::string store = "sqlite";  // or redis
  bool cluster = false;          // RabbitMQ ×3 + Redis Cluster (3 + 3); implies the Redis store
};

/// One point of the soak series.
struct RssPoint {
  double t_s = 0;             // since the fleet started
  std::uint64_t edge_kb = 0;  // summed over the edges
  std::uint64_t broker_kb = 0;
  std::uint64_t redis_kb = 0;  // 0 without Redis
  std::uint64_t edge_rows = 0;
};

/// The series after its warm-up, as the soak judges it.
struct RssDrift {
  std::size_t samples = 0;  // after the warm-up
  double warmup_s = 0;
  std::uint64_t first_kb = 0, last_kb = 0, min_kb = 0, max_kb = 0;
  double slope_kb_per_hour = 0;  // least squares over the samples after the warm-up
  [[nodiscard]] bool flat() const noexcept {
    const double growth = static_cast<double>(last_kb) - static_cast<double>(first_kb);
    return !(growth > 4096 && growth > 0.10 * static_cast<double>(first_kb));
  }
};

/// Summarises `series` after `warmup_s` (no samples after it: samples = 0).
RssDrift rss_drift(const std::vector<RssPoint>& series, double warmup_s);

/// What one class of processes (the edges, the broker nodes, the Redis primaries, the Redis
/// replicas) cost for the frames logged: CPU per 1,000 frames/s (the class's CPU seconds per
/// frame × 1,000, summed over its processes: the cores it used for every 1,000 frames/s at this
/// load, its fixed part, e.g. idle connections, included) and memory per process.
struct TierCost {
  std::string tier;  // "edges", "broker", "redis primaries", "redis replicas"
  std::size_t processes = 0;
  double cores_per_1000_frames_per_s = 0;
  std::uint64_t rss_final_kb_mean = 0;  // per process
  std::uint64_t rss_peak_kb_max = 0;
};

struct ScaleResult {
  ScaleOptions options;
  std::string dir;
  bool dir_removed = false;
  std::string mosquitto_version;
  std::uint64_t nofile_limit = 0;
  MachineLoad load_before, load_after;
  double ramp_s = 0;             // devices / connect rate
  double device_duration_s = 0;  // what `dsekp device --duration-s` got
  FleetRun fleet;
  JoinResult join;  // latency_us emptied after the percentiles are taken
  Percentiles latency_us;
  ProcSummary edge, broker;        // from the fleet's start until the edge had logged everything
                                   // (edge: summed over the edges, CPU and RSS)
  std::vector<ProcSummary> edges;  // each edge
  ProcSummary redis;               // with --store redis (--cluster: summed over the nodes)
  // --cluster: each broker node's Erlang VM and each Redis node, in node order; whether the
  // Redis node was a primary when the fleet ended.
  std::vector<ProcSummary> broker_nodes, redis_nodes;
  std::vector<bool> redis_node_primary;
  std::uint64_t edge_rss_before_kb = 0;    // the edges' RSS when ready, before any device (sum)
  std::vector<std::uint64_t> edge_frames;  // server log rows per edge (the union's parts)
  // Throughput in the steady phase (the end of the ramp to the end of the sending).
  double steady_s = 0;
  std::uint64_t steady_frames = 0;
  double delivered_frames_per_s = 0;
  double drain_s = 0;  // from the device's exit until the edges had logged everything
  // Per frame logged (the union), from the fleet's start to the last frame logged.
  double edge_cpu_us_per_frame = 0;  // all edges together
  double broker_cpu_us_per_frame = 0;
  double redis_cpu_us_per_frame = 0;
  std::vector<TierCost> tier_costs;  // every run: edges, broker, Redis (primaries, replicas)
  // Redis (--store redis): what it did while the fleet ran, and the edges' round trips to it.
  std::string redis_version;
  RedisStats redis_commands;            // after - before (--cluster: summed over the primaries)
  RedisStats redis_replica_commands;    // --cluster: the same over the replicas
  std::uint64_t store_round_trips = 0;  // summed over the edges' metrics
  bool round_trips_known = false;       // every edge answered both scrapes
  double redis_commands_per_frame = 0;  // work commands (no PING, no INFO) / frames logged,
                                        // scripts' inner commands included (commandstats)
  double round_trips_per_frame = 0;
  std::vector<RssPoint> rss_series;  // with --rss-every-s
  RssDrift rss_drift;
  double wall_s = 0;
  std::vector<Target> targets;
  std::vector<std::string> commands;
  std::vector<std::string> problems;
};

ScaleResult run_scale(const ScaleOptions& options,
                      const std::function<void(const std::string&)>& say);

std::string validate(const ScaleOptions& options);

}  // namespace dsekp::bench::e2e
