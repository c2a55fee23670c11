// `dsekp bench scale` (see scale_bench.hpp).
#include "scale_bench.hpp"

#include <algorithm>
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

std::string kb_as_mib(std::uint64_t kb) {
  return number(static_cast<double>(kb) / 1024.0, 1) + " MiB";
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
    const auto rss_period = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(o.rss_every_s > 0 ? o.rss_every_s : 1.0));
    auto next_rss = fleet_started;  // the first point at once: the baseline before any frame
    while (rig.fleet_running()) {
      if (o.rss_every_s > 0 && Clock::now() >= next_rss) {
        next_rss += rss_period;
        RssPoint p;
        p.t_s = std::chrono::duration<double>(Clock::now() - fleet_started).count();
        if (auto r = read_proc(rig.edge_pid())) p.edge_kb = r->rss_kb;
        if (auto r = read_proc(rig.broker_pid())) p.broker_kb = r->rss_kb;
        p.edge_rows = rig.edge_rows(o.mode);
        result.rss_series.push_back(p);
        say("rss t_s=" + number(p.t_s, 0) + " edge_kb=" + std::to_string(p.edge_kb) +
            " broker_kb=" + std::to_string(p.broker_kb) +
            " edge_rows=" + std::to_string(p.edge_rows));
      }
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
