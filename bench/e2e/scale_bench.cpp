// `dsekp bench scale` (see scale_bench.hpp).
#include "scale_bench.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "experiment/interrupt.hpp"

namespace dsekp::bench::e2e {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

}  // namespace

std::string validate(const ScaleOptions& o) {
  if (o.devices < 1 || o.devices > 60'000) return "--devices must be 1..60000";
  if (o.interval_ms < 1 || o.interval_ms > 3'600'000) return "--interval-ms must be 1..3600000";
  if (!(o.duration_s >= 1) || o.duration_s > 86'400) return "--duration-s must be 1..86400";
  if (!(o.connect_rate > 0) || o.connect_rate > 1e6) return "--connect-rate must be > 0";
  if (o.mode != "dsekp" && o.mode != "psk") return "--mode must be dsekp or psk";
  if (o.encoding != "json" && o.encoding != "compact") return "--encoding must be json or compact";
  if (o.qos != 0 && o.qos != 1) return "--qos must be 0 or 1";
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
    rig.start_broker();
    result.mosquitto_version = rig.mosquitto_version();
    result.nofile_limit = rig.nofile_limit();
    rig.start_edge({});
    if (auto r = read_proc(rig.edge_pid())) result.edge_rss_before_kb = r->rss_kb;

    ProcSampler sampler({rig.edge_pid(), rig.broker_pid()});
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
        number(result.ramp_s, 1) + " s connection ramp");
    rig.start_fleet(c, {"--duration-s", seconds_arg(result.device_duration_s), "--connect-rate",
                        number(o.connect_rate, 3)});
    const auto fleet_started = Clock::now();
    auto next_report = fleet_started + std::chrono::seconds(10);
    while (rig.fleet_running()) {
      rig.tick(std::chrono::milliseconds(100));
      if (Clock::now() >= next_report) {
        next_report += std::chrono::seconds(10);
        const auto edge = read_proc(rig.edge_pid());
        say(number(std::chrono::duration<double>(Clock::now() - fleet_started).count(), 0) +
            " s: edge logged " + std::to_string(rig.edge_rows(o.mode)) + " frames" +
            (edge ? ", RSS " + number(static_cast<double>(edge->rss_kb) / 1024.0, 1) + " MiB"
                  : ""));
      }
    }
    const auto limit =
        std::chrono::seconds(static_cast<long>(std::ceil(result.device_duration_s + 120)));
    result.fleet = rig.finish_fleet(limit);
    sampler.stop();
    result.edge = summarize(sampler.samples(0));
    result.broker = summarize(sampler.samples(1));
    say("fleet done in " + number(result.fleet.wall_s, 1) + " s; edge logged " +
        std::to_string(result.fleet.edge_rows) + " frames");
    rig.stop_edge();
    rig.stop_all();
    result.commands = rig.commands();
    const fs::path logs = rig.logs_dir();
    result.join = join_logs(logs / ("client_logs_" + o.mode + ".csv"),
                            logs / ("server_logs_" + o.mode + ".csv"),
                            o.mode == "psk" ? LogMode::psk : LogMode::dsekp);
    result.latency_us = percentiles(result.join.latency_us);
    result.join.latency_us = {};
    result.join.idle_latency_us = {};
  }
  for (const auto& p : result.fleet.problems) result.problems.push_back(p);
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
