// `dsekp bench e2e` (see e2e_bench.hpp).
#include "e2e_bench.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyze/error.hpp"
#include "analyze/log_files.hpp"
#include "device/credentials.hpp"
#include "experiment/interrupt.hpp"
#include "handshake_probe.hpp"
#include "logs/log_schema.hpp"
#include "proc_sampler.hpp"

namespace dsekp::bench::e2e {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// The DSEKP fleet counts as in its steady state once this share of its frames is logged.
constexpr double kSteadyShare = 0.10;

std::chrono::seconds fleet_limit(const E2eOptions& o) {
  const double expected = static_cast<double>(o.frames) * o.interval_ms / 1000.0 +
                          static_cast<double>(o.devices) / 500.0;
  return std::chrono::seconds(static_cast<long>(60 + 2 * expected));
}

experiment::DeviceCommand fleet_command(const E2eOptions& o, const std::string& mode) {
  experiment::DeviceCommand c;
  c.mode = mode;
  c.encoding = o.encoding;
  c.devices = o.devices;
  c.count = o.frames;
  c.interval_ms = o.interval_ms;
  c.seed = o.seed;
  c.qos = o.qos;
  return c;
}

/// Runs one measured fleet of `mode`, reads its logs and adds them to `m`; returns this run's
/// p50.
std::optional<double> measure_run(BenchRig& rig, const E2eOptions& o, ModeFigures& m) {
  const auto cpu_before = read_proc(rig.edge_pid());
  const std::uint64_t rows_before = rig.edge_rows(m.mode);
  rig.start_fleet(fleet_command(o, m.mode), {});
  m.fleets.push_back(rig.finish_fleet(fleet_limit(o)));
  const FleetRun& run = m.fleets.back();
  const auto cpu_after = read_proc(rig.edge_pid());
  if (cpu_before && cpu_after) {
    m.edge_cpu_s = m.edge_cpu_s.value_or(0) + (cpu_after->cpu_s() - cpu_before->cpu_s());
    m.edge_frames += run.edge_rows;
    if (m.edge_frames > 0)
      m.edge_cpu_us_per_frame = 1e6 * *m.edge_cpu_s / static_cast<double>(m.edge_frames);
  }
  const fs::path logs = rig.logs_dir();
  const Mode mode = parse_mode(m.mode).value();
  JoinResult join =
      join_logs(logs / dsekp::logs::standard_file_name(dsekp::logs::LogKind::client, mode),
                logs / dsekp::logs::standard_file_name(dsekp::logs::LogKind::server, mode), mode,
                rows_before);
  const std::optional<double> p50 = percentiles(join.latency_us).p50;
  accumulate(m.join, std::move(join));
  return p50;
}

/// Percentiles of the pooled latencies; the samples are dropped afterwards.
void finish_mode(ModeFigures& m) {
  m.latency_us = percentiles(m.join.latency_us);
  m.idle_edge_latency_us = percentiles(m.join.idle_latency_us);
  m.join.latency_us = {};
  m.join.idle_latency_us = {};
}

ProbeFigures run_probe(std::vector<device::ProvisionedDevice> identities, const BenchRig& rig,
                       const E2eOptions& o, const std::string& phase) {
  ProbeOptions po;
  po.host = rig.broker().host;
  po.port = rig.broker().port;
  po.qos = o.qos;
  po.encoding = o.encoding == "compact" ? Encoding::compact : Encoding::json;
  po.check = [] { experiment::throw_if_interrupted(); };
  HandshakeProbe probe(std::move(identities), po);
  const ProbeResult r = probe.run(o.handshakes);
  ProbeFigures f;
  f.phase = phase;
  f.attempted = r.attempted;
  f.ok = r.ok;
  f.timeouts = r.timeouts;
  f.wall_s = r.wall_s;
  f.latency_us = percentiles(r.latency_us);
  return f;
}

std::string fixed(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

/// Adds the handshakes of the DSEKP run that just ended (its device truncated the log at start).
void fleet_handshakes_from_log(BenchRig& rig, E2eResult& result, std::vector<double>& ms) {
  const fs::path path = rig.logs_dir() / "client_handshakes_dsekp.csv";
  try {
    const analyze::HandshakeLogData data = analyze::read_handshake_log(path, {});
    for (const auto& r : data.records) {
      ++result.fleet_handshakes;
      if (r.outcome == analyze::HandshakeOutcome::ok && r.has_ack) {
        ++result.fleet_handshakes_ok;
        ms.push_back(r.latency_ms);
      }
    }
  } catch (const analyze::AnalyzeError& e) {
    result.problems.push_back(std::string("the fleet's handshake log: ") + e.what());
  }
}

}  // namespace

std::string validate(const E2eOptions& o) {
  if (o.devices < 1 || o.devices > 60'000) return "--devices must be 1..60000";
  if (o.frames < 1 || o.frames > 10'000'000) return "--frames must be 1..10000000";
  if (o.interval_ms < 1 || o.interval_ms > 3'600'000) return "--interval-ms must be 1..3600000";
  if (o.rounds < 1 || o.rounds > 1000) return "--rounds must be 1..1000";
  if (o.handshakes > 100'000) return "--handshakes must be 0..100000";
  if (o.encoding != "json" && o.encoding != "compact") return "--encoding must be json or compact";
  if (o.qos != 0 && o.qos != 1) return "--qos must be 0 or 1";
  return {};
}

E2eResult run_e2e(const E2eOptions& o, const std::function<void(const std::string&)>& say) {
  if (const std::string problem = validate(o); !problem.empty())
    throw std::invalid_argument(problem);
  const auto started = Clock::now();
  E2eResult result;
  result.options = o;
  result.load_before = machine_load();
  WorkDir work(o.dir, "dsekp-bench-e2e", o.keep);
  result.dir = work.path().string();
  say("working folder " + result.dir);
  {
    RigOptions ro;
    ro.dir = work.path();
    ro.dsekp_exe = o.dsekp_exe;
    ro.mosquitto = o.mosquitto;
    ro.say = say;
    BenchRig rig(ro);
    const std::size_t per_phase = probe_identities_for(o.handshakes);
    say("provisioning " + std::to_string(o.devices) + " devices and " +
        std::to_string(2 * per_phase) + " probe identities");
    rig.provision(o.devices, 2 * per_phase);
    std::vector<device::ProvisionedDevice> idle_ids, loaded_ids;
    if (per_phase > 0) {
      auto all = device::load_credentials(rig.probe_credentials());
      idle_ids.assign(
          std::make_move_iterator(all.begin()),
          std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(per_phase)));
      loaded_ids.assign(
          std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(per_phase)),
          std::make_move_iterator(all.end()));
    }
    rig.start_broker();
    result.mosquitto_version = rig.mosquitto_version();
    // The probe opens sessions back to back: the per-device INIT budget (8, then one per 30 s)
    // would refuse them. Rate limiting is not what is measured here.
    std::vector<std::string> edge_args = {"--init-burst",     "0",
                                          "--init-refill-ms", "0",
                                          "--batch-wait-ms",  std::to_string(o.batch_wait_ms)};
    if (!o.mqtt_client.empty()) edge_args.insert(edge_args.end(), {"--mqtt-client", o.mqtt_client});
    rig.start_edge(edge_args);

    if (o.handshakes > 0) {
      say("handshake probe on the idle edge: " + std::to_string(o.handshakes) + " handshakes");
      result.probe_idle = run_probe(std::move(idle_ids), rig, o, "idle");
    }

    result.psk.mode = "psk";
    result.dsekp.mode = "dsekp";
    std::vector<double> handshake_ms;
    for (std::size_t round = 1; round <= o.rounds; ++round) {
      const std::string of = o.rounds > 1 ? " (round " + std::to_string(round) + " of " +
                                                std::to_string(o.rounds) + ")"
                                          : std::string();
      RoundFigures figures;
      say("PSK run" + of + ": " + std::to_string(o.devices) + " devices x " +
          std::to_string(o.frames) + " frames every " + std::to_string(o.interval_ms) + " ms");
      // Each run's logs are read as soon as the edge has logged its frames: the next device run
      // truncates the client log, and the edge appends to the server log.
      figures.psk_p50_us = measure_run(rig, o, result.psk);
      say("PSK run done in " + fixed(result.psk.fleets.back().wall_s) + " s, edge logged " +
          std::to_string(result.psk.fleets.back().edge_rows) + " frames");
      say("DSEKP run" + of + ": same settings");
      figures.dsekp_p50_us = measure_run(rig, o, result.dsekp);
      say("DSEKP run done in " + fixed(result.dsekp.fleets.back().wall_s) + " s, edge logged " +
          std::to_string(result.dsekp.fleets.back().edge_rows) + " frames");
      fleet_handshakes_from_log(rig, result, handshake_ms);
      result.rounds.push_back(figures);
    }
    finish_mode(result.psk);
    finish_mode(result.dsekp);
    result.fleet_handshake_ms = percentiles(handshake_ms);

    if (o.handshakes > 0) {
      say("load run for the handshake probe: the DSEKP fleet again, its logs in logs-load/");
      experiment::DeviceCommand load = fleet_command(o, "dsekp");
      load.logs_dir = (rig.dir() / "logs-load").string();
      fs::create_directories(load.logs_dir);
      rig.start_fleet(load, {});
      const auto expected = static_cast<std::uint64_t>(o.devices * o.frames);
      const auto steady = static_cast<std::uint64_t>(kSteadyShare * static_cast<double>(expected));
      const std::uint64_t before = rig.edge_rows("dsekp");
      while (rig.fleet_running() &&
             rig.edge_rows("dsekp") < before + std::max<std::uint64_t>(1, steady))
        rig.tick(std::chrono::milliseconds(10));
      say("handshake probe under that load: " + std::to_string(o.handshakes) + " handshakes");
      result.probe_loaded = run_probe(std::move(loaded_ids), rig, o, "under load");
      result.probe_loaded.overlapped_load = rig.fleet_running();
      if (!result.probe_loaded.overlapped_load)
        result.problems.push_back(
            "the load run ended before the handshake probe did: part of the 'under load' "
            "handshakes ran without load (use more --frames or fewer --handshakes)");
      result.load_fleet = rig.finish_fleet(fleet_limit(o));
      for (const auto& p : result.load_fleet.problems) result.problems.push_back("load run: " + p);
    }
    rig.stop_edge();
    rig.stop_all();
    result.commands = rig.commands();
  }
  for (const ModeFigures* m : {&result.psk, &result.dsekp}) {
    for (const auto& run : m->fleets)
      for (const auto& p : run.problems) result.problems.push_back(m->mode + ": " + p);
    if (m->join.bad_rows > 0)
      result.problems.push_back(m->mode + ": " + std::to_string(m->join.bad_rows) +
                                " unreadable log rows (first: " + m->join.first_bad.front() + ")");
    if (m->join.negative > 0)
      result.problems.push_back(m->mode + ": " + std::to_string(m->join.negative) +
                                " frames received before they were sent (system clock stepped?)");
  }
  if (result.probe_idle.timeouts + result.probe_loaded.timeouts > 0)
    result.problems.push_back(
        "handshake probe: " +
        std::to_string(result.probe_idle.timeouts + result.probe_loaded.timeouts) +
        " handshakes got no valid ACK within 5 s");

  result.targets.push_back(
      latency_parity_target(result.psk.latency_us.p50, result.dsekp.latency_us.p50));
  if (o.handshakes > 0)
    result.targets.push_back(handshake_target(result.probe_loaded.latency_us.p50));
  result.targets.push_back(
      delivery_target("psk_delivery", "PSK", result.psk.join.sent, result.psk.join.received));
  result.targets.push_back(delivery_target("dsekp_delivery", "DSEKP", result.dsekp.join.sent,
                                           result.dsekp.join.received));

  result.load_after = machine_load();
  result.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
  result.dir_removed = work.release();
  return result;
}

}  // namespace dsekp::bench::e2e
