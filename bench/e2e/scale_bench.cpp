// `dsekp bench scale` (see scale_bench.hpp).
#include "scale_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "bench/metrics_scrape.hpp"
#include "experiment/interrupt.hpp"
#include "logs/log_schema.hpp"

namespace dsekp::bench::e2e {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// --cluster: three broker nodes (a majority survives one lost) and three primaries with a
// replica each, on loopback.
constexpr int kClusterBrokerNodes = 3;
constexpr int kClusterRedisPrimaries = 3;

std::string number(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

/// "--duration-s" takes a float; print it without losing what the user gave.
std::string seconds_arg(double s) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", s);
  return text;
}

std::string kb_as_mib(std::uint64_t kb) {
  return number(static_cast<double>(kb) / 1024.0, 1) + " MiB";
}

/// Several processes' CPU and memory (the edges, the broker nodes, the Redis nodes) as one:
/// sums (the busiest second too: an upper bound, their busiest seconds need not coincide).
ProcSummary sum_of(const std::vector<ProcSummary>& parts) {
  ProcSummary total;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const ProcSummary& p = parts[i];
    total.samples = i == 0 ? p.samples : std::min(total.samples, p.samples);
    total.wall_s = std::max(total.wall_s, p.wall_s);
    total.cpu_user_s += p.cpu_user_s;
    total.cpu_sys_s += p.cpu_sys_s;
    total.cpu_percent += p.cpu_percent;
    total.cpu_percent_max_1s += p.cpu_percent_max_1s;
    total.rss_peak_kb += p.rss_peak_kb;
    total.rss_final_kb += p.rss_final_kb;
  }
  return total;
}

/// Writes the union of several logs of one kind, the edges' server logs or the fleets' client
/// logs (same header; the first file's header once, then every file's data lines), to `out`, for
/// the client/server join. A missing file (an edge that logged nothing yet) adds nothing. Throws if
/// the headers differ.
void concatenate_logs(const std::vector<fs::path>& logs, const fs::path& out) {
  std::ofstream union_file(out, std::ios::binary | std::ios::trunc);
  if (!union_file) throw std::runtime_error("cannot write " + out.string());
  std::string header;
  for (const fs::path& log : logs) {
    std::ifstream in(log, std::ios::binary);
    if (!in) continue;
    std::string first;
    if (!std::getline(in, first)) continue;
    if (header.empty()) {
      header = first;
      union_file << first << '\n';
    } else if (first != header) {
      throw std::runtime_error("logs to be joined have different headers: " + log.string());
    }
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) union_file << line << '\n';
  }
  if (!union_file.flush()) throw std::runtime_error("cannot write " + out.string());
}

/// The command counters of several Redis nodes added up (the version is the first's).
RedisStats sum_of(const std::vector<RedisStats>& parts) {
  RedisStats total;
  for (const RedisStats& p : parts) {
    if (total.version.empty()) total.version = p.version;
    total.total_commands += p.total_commands;
    for (const auto& [name, calls] : p.calls) total.calls[name] += calls;
  }
  return total;
}

/// Each node's counters (the cluster's nodes in order, or the one server).
std::vector<RedisStats> read_each(const std::vector<int>& ports) {
  std::vector<RedisStats> out;
  for (const int port : ports) out.push_back(read_redis_stats("127.0.0.1", port));
  return out;
}

/// Splits the fleet's credentials (a JSON array) into `parts` files of consecutive devices,
/// `devices` in all; returns the files and how many devices each holds.
std::vector<std::pair<std::string, std::size_t>> split_credentials(const std::string& file,
                                                                   std::size_t devices,
                                                                   std::size_t parts) {
  std::ifstream in(file);
  const nlohmann::json all = nlohmann::json::parse(in);
  if (!all.is_array() || all.size() < devices)
    throw std::runtime_error(file + ": fewer credentials than devices");
  std::vector<std::pair<std::string, std::size_t>> out;
  std::size_t next = 0;
  for (std::size_t k = 0; k < parts; ++k) {
    const std::size_t count = devices / parts + (k < devices % parts ? 1 : 0);
    nlohmann::json part = nlohmann::json::array();
    for (std::size_t i = 0; i < count; ++i) part.push_back(all[next++]);
    const std::string path = file + ".part-" + std::to_string(k + 1);
    std::ofstream(path) << part.dump();
    out.emplace_back(path, count);
  }
  return out;
}

TierCost tier_cost(const std::string& tier, const std::vector<ProcSummary>& processes,
                   double frames) {
  TierCost cost;
  cost.tier = tier;
  cost.processes = processes.size();
  std::uint64_t rss_sum = 0;
  for (const ProcSummary& p : processes) {
    cost.cores_per_1000_frames_per_s += (p.cpu_user_s + p.cpu_sys_s) / frames * 1000.0;
    rss_sum += p.rss_final_kb;
    cost.rss_peak_kb_max = std::max(cost.rss_peak_kb_max, p.rss_peak_kb);
  }
  if (!processes.empty()) cost.rss_final_kb_mean = rss_sum / processes.size();
  return cost;
}

/// Sum of the edges' dsekp_store_round_trips_total, or nothing if one did not answer.
std::optional<std::uint64_t> store_round_trips(const std::vector<int>& ports) {
  std::uint64_t total = 0;
  for (const int port : ports) {
    const auto text = scrape_metrics(port);
    if (!text) return std::nullopt;
    const auto v = metric_value(*text, "dsekp_store_round_trips_total");
    if (!v) return std::nullopt;
    total += static_cast<std::uint64_t>(*v);
  }
  return total;
}

}  // namespace

RssDrift rss_drift(const std::vector<RssPoint>& series, double warmup_s) {
  RssDrift d;
  d.warmup_s = warmup_s;
  double sum_t = 0, sum_y = 0, sum_tt = 0, sum_ty = 0;
  for (const RssPoint& p : series) {
    if (p.t_s < warmup_s || p.edge_kb == 0) continue;  // 0: the edge was gone at that moment
    if (d.samples == 0) d.first_kb = d.min_kb = d.max_kb = p.edge_kb;
    d.last_kb = p.edge_kb;
    d.min_kb = std::min(d.min_kb, p.edge_kb);
    d.max_kb = std::max(d.max_kb, p.edge_kb);
    const double y = static_cast<double>(p.edge_kb);
    sum_t += p.t_s;
    sum_y += y;
    sum_tt += p.t_s * p.t_s;
    sum_ty += p.t_s * y;
    ++d.samples;
  }
  const double n = static_cast<double>(d.samples);
  const double denominator = n * sum_tt - sum_t * sum_t;
  if (d.samples >= 2 && denominator > 0)
    d.slope_kb_per_hour = (n * sum_ty - sum_t * sum_y) / denominator * 3600.0;
  return d;
}

std::string validate(const ScaleOptions& o) {
  if (o.devices < 1 || o.devices > 60'000) return "--devices must be 1..60000";
  if (o.interval_ms < 1 || o.interval_ms > 3'600'000) return "--interval-ms must be 1..3600000";
  if (!(o.duration_s >= 1) || o.duration_s > 86'400) return "--duration-s must be 1..86400";
  if (!(o.connect_rate > 0) || o.connect_rate > 1e6) return "--connect-rate must be > 0";
  if (o.mode != "dsekp" && o.mode != "psk") return "--mode must be dsekp or psk";
  if (o.encoding != "json" && o.encoding != "compact") return "--encoding must be json or compact";
  if (o.qos != 0 && o.qos != 1) return "--qos must be 0 or 1";
  if (!(o.rss_every_s >= 0) || o.rss_every_s > 86'400) return "--rss-every-s must be 0..86400";
  if (o.edges < 1 || o.edges > 3) return "--edges must be 1..3";
  if (o.store != "sqlite" && o.store != "redis") return "--store must be sqlite or redis";
  if (o.cluster && o.devices < static_cast<std::size_t>(kClusterBrokerNodes))
    return "--cluster needs at least " + std::to_string(kClusterBrokerNodes) +
           " devices (one fleet per broker node)";
  if (o.edges > 1 && o.store != "redis" && !o.cluster)
    return "--edges " + std::to_string(o.edges) +
           " needs --store redis: the SQLite store keeps the session state per edge, so several "
           "edges cannot share one fleet's sessions (docs/SCALING.md)";
  return {};
}

ScaleResult run_scale(const ScaleOptions& o, const std::function<void(const std::string&)>& say) {
  if (const std::string problem = validate(o); !problem.empty())
    throw std::invalid_argument(problem);
  const auto started = Clock::now();
  ScaleResult result;
  result.options = o;
  result.load_before = machine_load();
  result.ramp_s = static_cast<double>(o.devices) / o.connect_rate;
  result.device_duration_s = o.duration_s + result.ramp_s;
  WorkDir work(o.dir, "dsekp-bench-scale", o.keep);
  result.dir = work.path().string();
  say("working folder " + result.dir);
  {
    RigOptions ro;
    ro.dir = work.path();
    ro.dsekp_exe = o.dsekp_exe;
    ro.mosquitto = o.mosquitto;
    ro.say = say;
    BenchRig rig(ro);
    say("provisioning " + std::to_string(o.devices) + " devices");
    rig.provision(o.devices, 0);
    const bool cluster = o.cluster;
    const bool redis = o.store == "redis" || cluster;
    if (cluster) {
      rig.start_cluster(kClusterBrokerNodes, kClusterRedisPrimaries);
    } else {
      rig.start_broker();
      if (redis) rig.start_redis();
    }
    result.mosquitto_version = rig.mosquitto_version();
    result.nofile_limit = rig.nofile_limit();
    EdgeGroup group;
    group.count = o.edges;
    group.redis_store = redis && !cluster;
    group.cluster = cluster;
    group.metrics = redis;  // for dsekp_store_round_trips_total
    if (cluster) {
      // One queue, competing consumers; redeliveries after a node's trouble come late
      // (SCALING.md "What is lost"): the widest window absorbs them.
      group.replay_window = 1024;
    } else if (o.edges > 1) {
      // docs/SCALING.md "Running several edges": one shared group, and a replay window that
      // reaches over the frames other edges accept meanwhile.
      group.shared_group = "bench";
      group.replay_window = 1024;
    }
    rig.start_edges(group);
    const std::vector<pid_t> edge_pids = rig.edge_pids();
    for (const pid_t pid : edge_pids)
      if (auto r = read_proc(pid)) result.edge_rss_before_kb += r->rss_kb;

    const std::vector<int> redis_ports =
        cluster ? rig.redis_node_ports()
                : (redis ? std::vector<int>{rig.redis_port()} : std::vector<int>{});
    std::optional<std::uint64_t> round_trips_before;
    std::vector<RedisStats> redis_before;
    if (redis) {
      round_trips_before = store_round_trips(rig.edge_metrics_ports());
      redis_before = read_each(redis_ports);
      result.redis_version = redis_before.front().version;
    }
    std::vector<pid_t> sampled = edge_pids;
    const std::size_t broker_index = sampled.size();
    const std::vector<pid_t> broker_pids =
        cluster ? rig.broker_node_pids() : std::vector<pid_t>{rig.broker_pid()};
    sampled.insert(sampled.end(), broker_pids.begin(), broker_pids.end());
    const std::size_t redis_index = sampled.size();
    const std::vector<pid_t> redis_pids =
        cluster ? rig.redis_node_pids()
                : (redis ? std::vector<pid_t>{rig.redis_pid()} : std::vector<pid_t>{});
    sampled.insert(sampled.end(), redis_pids.begin(), redis_pids.end());
    ProcSampler sampler(sampled);
    sampler.start();
    experiment::DeviceCommand c;
    c.mode = o.mode;
    c.encoding = o.encoding;
    c.devices = o.devices;
    c.count = 0;  // until --duration-s
    c.interval_ms = o.interval_ms;
    c.seed = o.seed;
    c.qos = o.qos;
    say(std::to_string(o.devices) + " " + o.mode + " devices, one frame every " +
        std::to_string(o.interval_ms) + " ms each, for " + number(o.duration_s, 0) + " s after a " +
        number(result.ramp_s, 1) + " s connection ramp; " + std::to_string(o.edges) + " edge" +
        (o.edges > 1 ? "s" : "") + ", " + (cluster ? "Redis Cluster" : o.store) + " store");
    const std::vector<std::string> fleet_args = {"--duration-s",
                                                 seconds_arg(result.device_duration_s),
                                                 "--connect-rate", number(o.connect_rate, 3)};
    if (cluster) {
      // One fleet per broker node, each with its share of the devices and of the connection
      // rate (the rate over all stays --connect-rate), its client logs in logs/fleet-K.
      std::vector<experiment::DeviceCommand> fleets;
      const auto parts = split_credentials(rig.credentials(), o.devices, kClusterBrokerNodes);
      for (std::size_t k = 0; k < parts.size(); ++k) {
        experiment::DeviceCommand f = c;
        f.broker = rig.cluster_mqtt(static_cast<int>(k));
        f.credentials = parts[k].first;
        f.devices = parts[k].second;
        f.anonymous = true;
        f.logs_dir = (rig.logs_dir() / ("fleet-" + std::to_string(k + 1))).string();
        fs::create_directories(f.logs_dir);
        fleets.push_back(f);
      }
      std::vector<std::string> args = fleet_args;
      args.back() = number(o.connect_rate / static_cast<double>(parts.size()), 3);
      rig.start_fleets(fleets, args);
    } else {
      rig.start_fleet(c, fleet_args);
    }
    const auto fleet_started = Clock::now();
    const auto seconds_since_start = [&] {
      return std::chrono::duration<double>(Clock::now() - fleet_started).count();
    };
    auto next_report = fleet_started + std::chrono::seconds(10);
    const auto rss_period = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(o.rss_every_s > 0 ? o.rss_every_s : 1.0));
    auto next_rss = fleet_started;  // the first point at once: the baseline before any frame
    // The steady phase: every device connected, until the device stops sending.
    std::optional<std::pair<double, std::uint64_t>> steady_start, steady_end;
    while (rig.fleet_running()) {
      const double t = seconds_since_start();
      if (!steady_start && t >= result.ramp_s) steady_start.emplace(t, rig.edge_rows(o.mode));
      if (!steady_end && t >= result.device_duration_s)
        steady_end.emplace(t, rig.edge_rows(o.mode));
      if (o.rss_every_s > 0 && Clock::now() >= next_rss) {
        next_rss += rss_period;
        RssPoint p;
        p.t_s = t;
        for (const pid_t pid : edge_pids)
          if (auto r = read_proc(pid)) p.edge_kb += r->rss_kb;
        if (auto r = read_proc(broker_pids.front())) p.broker_kb = r->rss_kb;
        for (const pid_t pid : redis_pids)
          if (auto r = read_proc(pid)) p.redis_kb += r->rss_kb;
        for (std::size_t b = 1; b < broker_pids.size(); ++b)
          if (auto r = read_proc(broker_pids[b])) p.broker_kb += r->rss_kb;
        p.edge_rows = rig.edge_rows(o.mode);
        result.rss_series.push_back(p);
        say("rss t_s=" + number(p.t_s, 0) + " edge_kb=" + std::to_string(p.edge_kb) +
            " broker_kb=" + std::to_string(p.broker_kb) +
            (redis ? " redis_kb=" + std::to_string(p.redis_kb) : std::string()) +
            " edge_rows=" + std::to_string(p.edge_rows));
      }
      rig.tick(std::chrono::milliseconds(100));
      if (Clock::now() >= next_report) {
        next_report += std::chrono::seconds(10);
        std::uint64_t rss_kb = 0;
        for (const pid_t pid : edge_pids)
          if (auto r = read_proc(pid)) rss_kb += r->rss_kb;
        say(number(seconds_since_start(), 0) + " s: edge" + (o.edges > 1 ? "s" : "") + " logged " +
            std::to_string(rig.edge_rows(o.mode)) + " frames, RSS " +
            number(static_cast<double>(rss_kb) / 1024.0, 1) + " MiB");
      }
    }
    const auto device_ended = Clock::now();
    if (!steady_end) steady_end.emplace(seconds_since_start(), rig.edge_rows(o.mode));
    if (!steady_start) steady_start = steady_end;
    const auto limit =
        std::chrono::seconds(static_cast<long>(std::ceil(result.device_duration_s + 120)));
    result.fleet = rig.finish_fleet(limit);
    result.drain_s = std::chrono::duration<double>(Clock::now() - device_ended).count();
    result.steady_s = steady_end->first - steady_start->first;
    result.steady_frames = steady_end->second - steady_start->second;
    if (result.steady_s > 0)
      result.delivered_frames_per_s = static_cast<double>(result.steady_frames) / result.steady_s;
    if (redis) {
      const auto round_trips_after = store_round_trips(rig.edge_metrics_ports());
      const std::vector<RedisStats> redis_after = read_each(redis_ports);
      std::vector<RedisStats> primaries, replicas;
      for (std::size_t n = 0; n < redis_after.size(); ++n) {
        const bool primary = !cluster || rig.redis_node_is_primary(static_cast<int>(n));
        result.redis_node_primary.push_back(primary);
        (primary ? primaries : replicas).push_back(difference(redis_after[n], redis_before[n]));
      }
      result.redis_commands = sum_of(primaries);
      result.redis_replica_commands = sum_of(replicas);
      if (round_trips_before && round_trips_after) {
        result.round_trips_known = true;
        result.store_round_trips = *round_trips_after - *round_trips_before;
      } else {
        result.problems.push_back(
            "an edge did not answer on its metrics port: no round trips per frame");
      }
    }
    sampler.stop();
    for (std::size_t i = 0; i < edge_pids.size(); ++i)
      result.edges.push_back(summarize(sampler.samples(i)));
    result.edge = sum_of(result.edges);
    for (std::size_t b = 0; b < broker_pids.size(); ++b)
      result.broker_nodes.push_back(summarize(sampler.samples(broker_index + b)));
    result.broker = sum_of(result.broker_nodes);
    for (std::size_t n = 0; n < redis_pids.size(); ++n)
      result.redis_nodes.push_back(summarize(sampler.samples(redis_index + n)));
    if (redis) result.redis = sum_of(result.redis_nodes);
    if (!cluster) {
      result.broker_nodes.clear();
      result.redis_nodes.clear();
    }
    result.edge_frames = rig.edge_rows_each(o.mode);
    std::vector<fs::path> server_logs;
    for (std::size_t k = 1; k <= rig.edge_count(); ++k)
      server_logs.push_back(rig.edge_logs_dir(k) / ("server_logs_" + o.mode + ".csv"));
    say("fleet done in " + number(result.fleet.wall_s, 1) + " s; edges logged " +
        std::to_string(result.fleet.edge_rows) + " frames");
    rig.stop_edge();
    rig.stop_all();
    result.commands = rig.commands();
    const fs::path logs = rig.logs_dir();
    fs::path server_log = server_logs.front();
    if (server_logs.size() > 1) {
      server_log = logs / ("server_logs_" + o.mode + ".all-edges.csv");
      concatenate_logs(server_logs, server_log);
    }
    const Mode mode = parse_mode(o.mode).value();
    const std::string client_file =
        dsekp::logs::standard_file_name(dsekp::logs::LogKind::client, mode);
    fs::path client_log = logs / client_file;
    if (cluster) {
      std::vector<fs::path> client_logs;
      for (int k = 1; k <= kClusterBrokerNodes; ++k)
        client_logs.push_back(logs / ("fleet-" + std::to_string(k)) / client_file);
      client_log = logs / (client_file + ".all-fleets.csv");
      concatenate_logs(client_logs, client_log);
    }
    result.join = join_logs(client_log, server_log, mode);
    result.latency_us = percentiles(result.join.latency_us);
    result.join.latency_us = {};
    result.join.idle_latency_us = {};
    const double frames = static_cast<double>(result.join.server_rows);
    if (frames > 0) {
      const auto per_frame_us = [frames](const ProcSummary& p) {
        return (p.cpu_user_s + p.cpu_sys_s) * 1e6 / frames;
      };
      result.edge_cpu_us_per_frame = per_frame_us(result.edge);
      result.broker_cpu_us_per_frame = per_frame_us(result.broker);
      if (redis) {
        result.redis_cpu_us_per_frame = per_frame_us(result.redis);
        result.redis_commands_per_frame =
            static_cast<double>(result.redis_commands.work_commands()) / frames;
        result.round_trips_per_frame = static_cast<double>(result.store_round_trips) / frames;
      }
      result.tier_costs.push_back(tier_cost("edges", result.edges, frames));
      result.tier_costs.push_back(tier_cost(
          "broker", cluster ? result.broker_nodes : std::vector<ProcSummary>{result.broker},
          frames));
      if (cluster) {
        std::vector<ProcSummary> primaries, replicas;
        for (std::size_t n = 0; n < result.redis_nodes.size(); ++n)
          (result.redis_node_primary.at(n) ? primaries : replicas).push_back(result.redis_nodes[n]);
        result.tier_costs.push_back(tier_cost("redis primaries", primaries, frames));
        result.tier_costs.push_back(tier_cost("redis replicas", replicas, frames));
      } else if (redis) {
        result.tier_costs.push_back(tier_cost("redis", {result.redis}, frames));
      }
    }
  }
  if (o.rss_every_s > 0) {
    // The warm-up: the edge's caches (SQLite pages, the session table) fill while devices join.
    const double warmup = std::max(result.ramp_s, 0.10 * result.device_duration_s);
    result.rss_drift = rss_drift(result.rss_series, warmup);
    const RssDrift& d = result.rss_drift;
    if (d.samples >= 2) {
      say("edge RSS after a " + number(warmup, 0) + " s warm-up (" + std::to_string(d.samples) +
          " samples): first " + kb_as_mib(d.first_kb) + ", last " + kb_as_mib(d.last_kb) +
          ", min " + kb_as_mib(d.min_kb) + ", max " + kb_as_mib(d.max_kb) + ", slope " +
          number(d.slope_kb_per_hour / 1024.0, 2) + " MiB/h: " + (d.flat() ? "flat" : "GROWING"));
      if (!d.flat())
        result.problems.push_back("the edge's RSS grew from " + kb_as_mib(d.first_kb) + " to " +
                                  kb_as_mib(d.last_kb) + " after the warm-up");
    } else {
      say("too few RSS samples after the warm-up to judge the memory");
    }
  }
  for (const auto& p : result.fleet.problems) result.problems.push_back(p);
  if (result.join.duplicates > 0)
    result.problems.push_back(std::to_string(result.join.duplicates) +
                              " frames logged more than once" +
                              (o.edges > 1 ? " (in two edges' logs, or twice in one)" : ""));
  if (result.join.unexpected > 0)
    result.problems.push_back(std::to_string(result.join.unexpected) +
                              " frames logged by an edge that the devices did not log as sent");
  if (result.join.bad_rows > 0)
    result.problems.push_back(std::to_string(result.join.bad_rows) +
                              " unreadable log rows (first: " + result.join.first_bad.front() +
                              ")");
  const auto& s = result.fleet.summary;
  if (o.mode == "dsekp" && s.is_object() && s.contains("handshakes") &&
      s["handshakes"].value("ok", 0) < static_cast<std::int64_t>(o.devices))
    result.problems.push_back("only " + std::to_string(s["handshakes"].value("ok", 0)) + " of " +
                              std::to_string(o.devices) + " devices completed a handshake");
  result.targets.push_back(delivery_target("delivery", o.mode == "psk" ? "PSK" : "DSEKP",
                                           result.join.sent, result.join.received));
  result.load_after = machine_load();
  result.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
  result.dir_removed = work.release();
  return result;
}

}  // namespace dsekp::bench::e2e
