// Text and JSON reports of the end-to-end measurements (see report.hpp).
#include "report.hpp"

#include <cstdarg>
#include <cstdio>

#include "analyze/text_format.hpp"

namespace dsekp::bench::e2e {
namespace {

using analyze::count;
using analyze::fixed;
using nlohmann::ordered_json;

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  return text;
}

std::string opt(const std::optional<double>& v, int decimals) {
  return fixed(v, decimals);
}

nlohmann::ordered_json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

std::string mib(std::uint64_t kb) {
  return fixed(static_cast<double>(kb) / 1024.0, 1) + " MiB";
}

double offered_rate(std::size_t devices, std::uint32_t interval_ms) {
  return static_cast<double>(devices) * 1000.0 / interval_ms;
}

std::string target_line(const Target& t) {
  std::string value = t.value ? fixed(*t.value, t.unit == "%" ? 2 : 1) + " " + t.unit : "no value";
  if (t.id == "dsekp_p50_vs_psk_p50" && t.value && *t.value >= 0) value = "+" + value;
  return "  " + t.description + ": " + value + " -> " + verdict(t) + "\n";
}

void append_common_tail(std::string& out, const std::vector<Target>& targets,
                        const std::vector<std::string>& problems,
                        const std::vector<std::string>& commands, const std::string& dir,
                        bool removed) {
  out += "\nTargets\n";
  for (const auto& t : targets) out += target_line(t);
  if (!problems.empty()) {
    out += "\nProblems\n";
    for (const auto& p : problems) out += "  " + p + "\n";
  }
  out += "\nCommands run\n";
  for (const auto& c : commands) out += "  " + c + "\n";
  out += "\nWorking folder: " + dir + (removed ? " (removed)" : " (kept)") + "\n";
}

ordered_json fleet_json(const FleetRun& f) {
  return {{"command", f.command},  {"exit_code", f.exit_code}, {"exit", f.exit_text},
          {"wall_s", f.wall_s},    {"edge_rows", f.edge_rows}, {"summary", f.summary},
          {"problems", f.problems}};
}

ordered_json join_json(const JoinResult& j) {
  return {{"client_rows", j.client_rows},
          {"server_rows", j.server_rows},
          {"sent", j.sent},
          {"received", j.received},
          {"delivery_ratio", j.delivery_ratio()},
          {"duplicates", j.duplicates},
          {"unexpected", j.unexpected},
          {"negative_latencies", j.negative},
          {"bad_rows", j.bad_rows},
          {"first_bad_rows", j.first_bad}};
}

ordered_json proc_json(const ProcSummary& s) {
  return {{"samples", s.samples},
          {"wall_s", s.wall_s},
          {"cpu_user_s", s.cpu_user_s},
          {"cpu_sys_s", s.cpu_sys_s},
          {"cpu_percent_of_one_core", s.cpu_percent},
          {"cpu_percent_max_1s", s.cpu_percent_max_1s},
          {"rss_peak_kib", s.rss_peak_kb},
          {"rss_final_kib", s.rss_final_kb}};
}

ordered_json probe_json(const ProbeFigures& p) {
  return {{"phase", p.phase},
          {"attempted", p.attempted},
          {"ok", p.ok},
          {"timeouts", p.timeouts},
          {"wall_s", p.wall_s},
          {"overlapped_load", p.overlapped_load},
          {"latency_us", to_json(p.latency_us)}};
}

std::string latency_row(const std::string& label, const JoinResult& j, const Percentiles& p) {
  return format("%-6s %10s %10s %9s %9s %9s %9s %9s %10s\n", label.c_str(), count(j.sent).c_str(),
                count(j.received).c_str(), fixed(100.0 * j.delivery_ratio(), 2).c_str(),
                opt(p.p50, 1).c_str(), opt(p.p95, 1).c_str(), opt(p.p99, 1).c_str(),
                opt(p.mean, 1).c_str(), opt(p.max, 0).c_str());
}

std::string probe_row(const ProbeFigures& p) {
  return format("%-11s %10s %6s %9s %9s %9s %9s %9s %9s\n", p.phase.c_str(),
                count(p.attempted).c_str(), count(p.ok).c_str(), opt(p.latency_us.p50, 1).c_str(),
                opt(p.latency_us.p95, 1).c_str(), opt(p.latency_us.p99, 1).c_str(),
                opt(p.latency_us.mean, 1).c_str(), opt(p.latency_us.min, 1).c_str(),
                opt(p.latency_us.max, 0).c_str());
}

std::string load_line(const MachineLoad& before, const MachineLoad& after, double wall_s) {
  return format(
      "  machine: %u CPUs, load average (1/5/15 min) %.2f/%.2f/%.2f before, "
      "%.2f/%.2f/%.2f after; the run took %.1f s\n",
      before.cpus, before.load1, before.load5, before.load15, after.load1, after.load5,
      after.load15, wall_s);
}

}  // namespace

std::string e2e_text(const E2eResult& r) {
  const E2eOptions& o = r.options;
  std::string out;
  out += "End to end on loopback: PSK against DSEKP on one broker and one edge\n";
  out += format(
      "  broker: %s (private, loopback, TCP_NODELAY); edge: dsekp edge, default sinks, "
      "batch wait %u ms, MQTT client %s\n",
      r.mosquitto_version.c_str(), o.batch_wait_ms,
      o.mqtt_client.empty() ? "(the edge's default)" : o.mqtt_client.c_str());
  out += format(
      "  load per run: %zu devices x %s frames, one every %u ms each = %s frames/s "
      "offered; %s encoding, QoS %d\n",
      o.devices, count(o.frames).c_str(), o.interval_ms,
      fixed(offered_rate(o.devices, o.interval_ms), 0).c_str(), o.encoding.c_str(), o.qos);
  out += o.rounds == 1 ? std::string("  one run per mode: PSK, then DSEKP\n")
                       : format(
                             "  %zu runs per mode, alternating PSK, DSEKP, PSK, ...; frames "
                             "pooled per mode\n",
                             o.rounds);
  out += load_line(r.load_before, r.load_after, r.wall_s);

  out +=
      "\nSend-to-edge latency, microseconds: client sendts_us (before the publish call) to edge\n"
      "recvts_us (on delivery), frames joined by (dev_id, sessctr_id, seq)\n";
  out += format("%-6s %10s %10s %9s %9s %9s %9s %9s %10s\n", "mode", "sent", "received", "deliv. %",
                "p50", "p95", "p99", "mean", "max");
  out += latency_row("PSK", r.psk.join, r.psk.latency_us);
  out += latency_row("DSEKP", r.dsekp.join, r.dsekp.latency_us);
  if (r.psk.latency_us.p50 && r.dsekp.latency_us.p50 && *r.psk.latency_us.p50 > 0) {
    const double diff = *r.dsekp.latency_us.p50 - *r.psk.latency_us.p50;
    out += format("DSEKP p50 - PSK p50 = %s us (%s %%)\n", analyze::signed_fixed(diff, 1).c_str(),
                  analyze::signed_fixed(100.0 * diff / *r.psk.latency_us.p50, 1).c_str());
  }
  out += format(
      "Frames that found the edge idle (arrived >= %llu us after the frame before "
      "them): PSK %s of them, p50 %s us; DSEKP %s, p50 %s us\n",
      static_cast<unsigned long long>(kIdleGapUs), count(r.psk.idle_edge_latency_us.n).c_str(),
      opt(r.psk.idle_edge_latency_us.p50, 1).c_str(), count(r.dsekp.idle_edge_latency_us.n).c_str(),
      opt(r.dsekp.idle_edge_latency_us.p50, 1).c_str());
  if (r.rounds.size() > 1) {
    out += "p50 per round (PSK / DSEKP, us):";
    for (const auto& round : r.rounds)
      out += " " + opt(round.psk_p50_us, 1) + " / " + opt(round.dsekp_p50_us, 1) + ";";
    out.back() = '\n';
  }
  out += format(
      "Edge CPU (user + system) per frame logged, handshakes included: PSK %s us, "
      "DSEKP %s us\n",
      opt(r.psk.edge_cpu_us_per_frame, 1).c_str(), opt(r.dsekp.edge_cpu_us_per_frame, 1).c_str());

  if (o.handshakes > 0) {
    out +=
        "\nINIT->ACK handshake latency, microseconds: in-process probe device (DeviceSession +\n"
        "libmosquitto, steady_clock), publish of the INIT to a verified ACK, one at a time\n";
    out += format("%-11s %10s %6s %9s %9s %9s %9s %9s %9s\n", "phase", "handshakes", "ok", "p50",
                  "p95", "p99", "mean", "min", "max");
    out += probe_row(r.probe_idle);
    out += probe_row(r.probe_loaded);
    out +=
        "(under load: beside a third run of the DSEKP fleet with the same settings, whose\n"
        "frames are not in the latency table above)\n";
  }
  out += format(
      "The DSEKP fleet's own handshakes (client_handshakes_dsekp.csv, millisecond "
      "columns): %zu, %zu ok, p50 %s ms, p99 %s ms\n",
      r.fleet_handshakes, r.fleet_handshakes_ok, opt(r.fleet_handshake_ms.p50, 0).c_str(),
      opt(r.fleet_handshake_ms.p99, 0).c_str());
  append_common_tail(out, r.targets, r.problems, r.commands, r.dir, r.dir_removed);
  return out;
}

ordered_json e2e_json(const E2eResult& r) {
  const E2eOptions& o = r.options;
  ordered_json modes = ordered_json::object();
  for (const ModeFigures* m : {&r.psk, &r.dsekp})
    modes[m->mode] = {{"logs", join_json(m->join)},
                      {"latency_us", to_json(m->latency_us)},
                      {"idle_edge_latency_us", to_json(m->idle_edge_latency_us)},
                      {"edge_cpu_s", optional_number(m->edge_cpu_s)},
                      {"edge_cpu_us_per_frame", optional_number(m->edge_cpu_us_per_frame)},
                      {"fleets", [&] {
                         ordered_json runs = ordered_json::array();
                         for (const auto& f : m->fleets) runs.push_back(fleet_json(f));
                         return runs;
                       }()}};
  ordered_json targets = ordered_json::array();
  for (const auto& t : r.targets) targets.push_back(to_json(t));
  ordered_json rounds = ordered_json::array();
  for (const auto& round : r.rounds)
    rounds.push_back({{"psk_p50_us", optional_number(round.psk_p50_us)},
                      {"dsekp_p50_us", optional_number(round.dsekp_p50_us)}});
  return {{"benchmark", "e2e"},
          {"settings",
           {{"devices", o.devices},
            {"frames_per_device", o.frames},
            {"interval_ms", o.interval_ms},
            {"rounds", o.rounds},
            {"offered_frames_per_s", offered_rate(o.devices, o.interval_ms)},
            {"encoding", o.encoding},
            {"qos", o.qos},
            {"edge_batch_wait_ms", o.batch_wait_ms},
            {"edge_mqtt_client", o.mqtt_client.empty() ? "default" : o.mqtt_client},
            {"probe_handshakes", o.handshakes},
            {"seed", o.seed}}},
          {"broker", r.mosquitto_version},
          {"machine_load", {{"before", to_json(r.load_before)}, {"after", to_json(r.load_after)}}},
          {"latency_definition",
           "edge recvts_us - device sendts_us per frame, joined by (dev_id, sessctr_id, seq)"},
          {"idle_edge_definition", "frames received at least " + std::to_string(kIdleGapUs) +
                                       " us after the server log row before them"},
          {"modes", modes},
          {"rounds", rounds},
          {"handshake_probe",
           {{"definition", "steady_clock from the INIT publish to a verified ACK, in-process"},
            {"idle", probe_json(r.probe_idle)},
            {"under_load", probe_json(r.probe_loaded)},
            {"load_fleet", fleet_json(r.load_fleet)}}},
          {"fleet_handshake_log_ms",
           {{"handshakes", r.fleet_handshakes},
            {"ok", r.fleet_handshakes_ok},
            {"latency_ms", to_json(r.fleet_handshake_ms)}}},
          {"targets", targets},
          {"all_targets_met",
           std::all_of(r.targets.begin(), r.targets.end(), [](const Target& t) { return t.met; })},
          {"problems", r.problems},
          {"commands", r.commands},
          {"wall_s", r.wall_s},
          {"dir", r.dir},
          {"dir_removed", r.dir_removed}};
}

std::string scale_text(const ScaleResult& r) {
  const ScaleOptions& o = r.options;
  const bool redis = o.store == "redis" || o.cluster;
  std::string out;
  if (o.cluster) {
    out += format(
        "Scale: %s %s devices connected at once to a %zu-node RabbitMQ cluster (one fleet per "
        "node) and %zu edge%s (AMQP, one quorum queue)\n",
        count(o.devices).c_str(), o.mode == "psk" ? "PSK" : "DSEKP", r.broker_nodes.size(), o.edges,
        o.edges > 1 ? "s" : "");
  } else if (o.edges == 1) {
    out += format("Scale: %s %s devices connected at once to one broker and one edge\n",
                  count(o.devices).c_str(), o.mode == "psk" ? "PSK" : "DSEKP");
  } else {
    out += format(
        "Scale: %s %s devices connected at once to one broker and %zu edges (one shared "
        "group)\n",
        count(o.devices).c_str(), o.mode == "psk" ? "PSK" : "DSEKP", o.edges);
  }
  out += format(
      "  each sends one frame every %u ms (%s frames/s offered) for %s s after a %s s "
      "connection ramp (%s connections/s); %s encoding, QoS %d\n",
      o.interval_ms, fixed(offered_rate(o.devices, o.interval_ms), 1).c_str(),
      fixed(o.duration_s, 0).c_str(), fixed(r.ramp_s, 1).c_str(), fixed(o.connect_rate, 0).c_str(),
      o.encoding.c_str(), o.qos);
  out += "  broker: " + r.mosquitto_version + " (private, loopback, descriptor limit " +
         std::to_string(r.nofile_limit) + ")\n";
  const char* store = o.cluster ? "Redis Cluster (3 primaries + 3 replicas, AOF fsync always"
                      : redis   ? "Redis (private redis-server, AOF on"
                                : "SQLite (per edge)";
  out +=
      format("  edges: %zu, session store %s%s\n", o.edges, store,
             redis ? (r.redis_version.empty() ? ")" : (", " + r.redis_version + ")")).c_str() : "");
  out += load_line(r.load_before, r.load_after, r.wall_s);

  const auto& s = r.fleet.summary;
  out += "\nDelivery\n";
  out += format("  frames sent %s, logged by the edge%s %s: delivery %s %%",
                count(r.join.sent).c_str(), o.edges > 1 ? "s" : "", count(r.join.received).c_str(),
                fixed(100.0 * r.join.delivery_ratio(), 3).c_str());
  out += format(" (duplicates %s, unexpected %s)\n", count(r.join.duplicates).c_str(),
                count(r.join.unexpected).c_str());
  if (o.edges > 1) {
    out += "  frames per edge:";
    for (std::size_t k = 0; k < r.edge_frames.size(); ++k)
      out += format(" edge-%zu %s%s", k + 1, count(r.edge_frames[k]).c_str(),
                    k + 1 < r.edge_frames.size() ? "," : "");
    out += format("; the union of their server logs holds every frame exactly once: %s\n",
                  r.join.duplicates == 0 && r.join.unexpected == 0 && r.join.received == r.join.sent
                      ? "yes"
                      : "NO");
  }
  if (s.is_object()) {
    if (s.contains("handshakes") && s["handshakes"].is_object())
      out += format("  handshakes: %s ok of %s started, %s timeouts, %s retransmissions\n",
                    count(s["handshakes"].value("ok", 0ULL)).c_str(),
                    count(s["handshakes"].value("started", 0ULL)).c_str(),
                    count(s["handshakes"].value("timeout", 0ULL)).c_str(),
                    count(s["handshakes"].value("retransmissions", 0ULL)).c_str());
    out += format("  device: %s connect failures, %s disconnects, %s publish errors; ran %s s\n",
                  count(s.value("connect_failures", 0ULL)).c_str(),
                  count(s.value("disconnects", 0ULL)).c_str(),
                  count(s.value("publish_errors", 0ULL)).c_str(),
                  fixed(s.value("duration_s", 0.0), 1).c_str());
  }
  out += format("  send-to-edge latency (us): p50 %s, p95 %s, p99 %s, max %s\n",
                opt(r.latency_us.p50, 1).c_str(), opt(r.latency_us.p95, 1).c_str(),
                opt(r.latency_us.p99, 1).c_str(), opt(r.latency_us.max, 0).c_str());

  out += "\nThroughput\n";
  out += format(
      "  delivered %s frames/s (offered %s): %s frames logged in the %s s from the end of the "
      "ramp to the end of the sending\n",
      fixed(r.delivered_frames_per_s, 1).c_str(),
      fixed(offered_rate(o.devices, o.interval_ms), 1).c_str(), count(r.steady_frames).c_str(),
      fixed(r.steady_s, 1).c_str());
  out += format("  after the device stopped, the edge%s took %s s to log the rest\n",
                o.edges > 1 ? "s" : "", fixed(r.drain_s, 1).c_str());
  out += format("  CPU per frame logged (user + system): edge%s %s us, broker %s us",
                o.edges > 1 ? "s (all)" : "", fixed(r.edge_cpu_us_per_frame, 1).c_str(),
                fixed(r.broker_cpu_us_per_frame, 1).c_str());
  out += redis ? format(", Redis %s us\n", fixed(r.redis_cpu_us_per_frame, 1).c_str())
               : std::string("\n");
  if (redis) {
    out += "\nRedis, from the fleet's start until the last frame was logged\n";
    out += format(
        "  commands per frame%s %s (%s commands without PING, INFO, CLUSTER INFO and REPLCONF;",
        o.cluster ? " on the primaries" : "", fixed(r.redis_commands_per_frame, 2).c_str(),
        count(r.redis_commands.work_commands()).c_str());
    for (const auto& [name, calls] : r.redis_commands.calls) out += " " + name + " " + count(calls);
    out +=
        ";\n    Redis 7 counts the commands the edges' Lua scripts run inside Redis here, as in "
        "total_commands_processed)\n";
    if (o.cluster && r.join.server_rows > 0)
      out += format("  on the replicas (replaying the primaries' writes): %s per frame\n",
                    fixed(static_cast<double>(r.redis_replica_commands.work_commands()) /
                              static_cast<double>(r.join.server_rows),
                          2)
                        .c_str());
    if (r.round_trips_known)
      out += format("  round trips per frame %s (%s, the edges' dsekp_store_round_trips_total)\n",
                    fixed(r.round_trips_per_frame, 2).c_str(), count(r.store_round_trips).c_str());
    else
      out += "  round trips per frame: unknown (an edge's metrics did not answer)\n";
  }

  out +=
      "\nResources, sampled from /proc every second from the fleet's start until the edge had\n"
      "logged every acknowledged frame (" +
      fixed(r.edge.wall_s, 1) + " s)\n";
  out += format("%-8s %10s %10s %12s %12s %12s %12s\n", "process", "user s", "sys s", "% of 1 core",
                "max 1 s %", "peak RSS", "final RSS");
  const auto proc_row = [&](const std::string& name, const ProcSummary& p) {
    out += format("%-8s %10s %10s %12s %12s %12s %12s\n", name.c_str(),
                  fixed(p.cpu_user_s, 2).c_str(), fixed(p.cpu_sys_s, 2).c_str(),
                  fixed(p.cpu_percent, 1).c_str(), fixed(p.cpu_percent_max_1s, 1).c_str(),
                  mib(p.rss_peak_kb).c_str(), mib(p.rss_final_kb).c_str());
  };
  if (o.edges == 1) {
    proc_row("edge", r.edge);
  } else {
    for (std::size_t k = 0; k < r.edges.size(); ++k)
      proc_row("edge-" + std::to_string(k + 1), r.edges[k]);
    proc_row("edges", r.edge);
  }
  if (o.cluster) {
    for (std::size_t b = 0; b < r.broker_nodes.size(); ++b)
      proc_row("rabbit-" + std::to_string(b), r.broker_nodes[b]);
    for (std::size_t n = 0; n < r.redis_nodes.size(); ++n)
      proc_row(std::string("redis-") + std::to_string(n) + (r.redis_node_primary.at(n) ? "p" : "r"),
               r.redis_nodes[n]);
    out +=
        "  (rabbit-K: broker node K's Erlang VM; redis-Np / redis-Nr: a primary / a replica "
        "when the fleet ended)\n";
  } else {
    proc_row("broker", r.broker);
    if (redis) proc_row("redis", r.redis);
  }
  out += "  edge" + std::string(o.edges > 1 ? "s'" : "") +
         " RSS when ready, before any device: " + mib(r.edge_rss_before_kb) + "\n";
  if (o.edges > 1)
    out += "  (edges: the sum; its max 1 s % adds each edge's busiest second, an upper bound)\n";
  if (!r.tier_costs.empty()) {
    out +=
        "\nCost per 1,000 frames/s at this load (CPU s per frame logged x 1,000, summed over the "
        "processes:\nthe cores that part used for every 1,000 frames/s, its fixed part included: "
        "runs at two\nrates separate the two; docs/SCALING.md \"Per-node costs\")\n";
    out += format("  %-16s %9s %14s %16s %14s\n", "part", "processes", "cores/1k fps",
                  "RSS each (final)", "RSS peak max");
    for (const TierCost& c : r.tier_costs)
      out += format("  %-16s %9zu %14s %16s %14s\n", c.tier.c_str(), c.processes,
                    fixed(c.cores_per_1000_frames_per_s, 3).c_str(),
                    mib(c.rss_final_kb_mean).c_str(), mib(c.rss_peak_kb_max).c_str());
  }
  if (!r.rss_series.empty()) {
    out += format("\nRSS every %s s (edge%s summed)\n", fixed(o.rss_every_s, 0).c_str(),
                  o.edges > 1 ? "s" : "");
    out += format("%8s %10s %10s %10s %12s\n", "t s", "edge KiB", "broker KiB", "redis KiB",
                  "edge rows");
    for (const RssPoint& p : r.rss_series)
      out += format("%8s %10llu %10llu %10llu %12llu\n", fixed(p.t_s, 0).c_str(),
                    static_cast<unsigned long long>(p.edge_kb),
                    static_cast<unsigned long long>(p.broker_kb),
                    static_cast<unsigned long long>(p.redis_kb),
                    static_cast<unsigned long long>(p.edge_rows));
    const RssDrift& d = r.rss_drift;
    if (d.samples >= 2)
      out += format(
          "  after a %s s warm-up (%zu samples): first %s, last %s, min %s, max %s, slope %s "
          "MiB/h: %s\n",
          fixed(d.warmup_s, 0).c_str(), d.samples, mib(d.first_kb).c_str(), mib(d.last_kb).c_str(),
          mib(d.min_kb).c_str(), mib(d.max_kb).c_str(),
          fixed(d.slope_kb_per_hour / 1024.0, 2).c_str(), d.flat() ? "flat" : "GROWING");
  }
  append_common_tail(out, r.targets, r.problems, r.commands, r.dir, r.dir_removed);
  return out;
}

ordered_json scale_json(const ScaleResult& r) {
  const ScaleOptions& o = r.options;
  const bool redis = o.store == "redis" || o.cluster;
  ordered_json targets = ordered_json::array();
  for (const auto& t : r.targets) targets.push_back(to_json(t));
  ordered_json edges = ordered_json::array();
  for (std::size_t k = 0; k < r.edges.size(); ++k) {
    ordered_json e = proc_json(r.edges[k]);
    e["name"] = "edge-" + std::to_string(k + 1);
    e["frames_logged"] = k < r.edge_frames.size() ? r.edge_frames[k] : 0;
    edges.push_back(e);
  }
  ordered_json series = ordered_json::array();
  for (const RssPoint& p : r.rss_series)
    series.push_back({{"t_s", p.t_s},
                      {"edge_kib", p.edge_kb},
                      {"broker_kib", p.broker_kb},
                      {"redis_kib", p.redis_kb},
                      {"edge_rows", p.edge_rows}});
  const RssDrift& d = r.rss_drift;
  ordered_json redis_json = nullptr;
  if (redis)
    redis_json = {
        {"version", r.redis_version},
        {"process", proc_json(r.redis)},
        {"commands", to_json(r.redis_commands)},
        {"commands_per_frame", r.redis_commands_per_frame},
        {"round_trips",
         r.round_trips_known ? ordered_json(r.store_round_trips) : ordered_json(nullptr)},
        {"round_trips_per_frame",
         r.round_trips_known ? ordered_json(r.round_trips_per_frame) : ordered_json(nullptr)},
        {"cpu_us_per_frame", r.redis_cpu_us_per_frame}};
  if (o.cluster && redis_json.is_object())
    redis_json["replica_commands"] = to_json(r.redis_replica_commands);
  ordered_json costs = ordered_json::array();
  for (const TierCost& c : r.tier_costs)
    costs.push_back({{"part", c.tier},
                     {"processes", c.processes},
                     {"cores_per_1000_frames_per_s", c.cores_per_1000_frames_per_s},
                     {"rss_final_kib_mean", c.rss_final_kb_mean},
                     {"rss_peak_kib_max", c.rss_peak_kb_max}});
  ordered_json cluster = nullptr;
  if (o.cluster) {
    ordered_json brokers = ordered_json::array(), nodes = ordered_json::array();
    for (const ProcSummary& b : r.broker_nodes) brokers.push_back(proc_json(b));
    for (std::size_t n = 0; n < r.redis_nodes.size(); ++n) {
      ordered_json node = proc_json(r.redis_nodes[n]);
      node["role"] = r.redis_node_primary.at(n) ? "primary" : "replica";
      nodes.push_back(node);
    }
    cluster = {{"broker_nodes", brokers}, {"redis_nodes", nodes}};
  }
  return {{"benchmark", "scale"},
          {"settings",
           {{"devices", o.devices},
            {"mode", o.mode},
            {"interval_ms", o.interval_ms},
            {"offered_frames_per_s", offered_rate(o.devices, o.interval_ms)},
            {"duration_s", o.duration_s},
            {"connect_rate", o.connect_rate},
            {"ramp_s", r.ramp_s},
            {"device_duration_s", r.device_duration_s},
            {"encoding", o.encoding},
            {"qos", o.qos},
            {"seed", o.seed},
            {"edges", o.edges},
            {"store", o.cluster ? std::string("redis-cluster") : o.store},
            {"cluster", o.cluster},
            {"rss_every_s", o.rss_every_s}}},
          {"broker", r.mosquitto_version},
          {"nofile_limit", r.nofile_limit},
          {"machine_load", {{"before", to_json(r.load_before)}, {"after", to_json(r.load_after)}}},
          {"logs", join_json(r.join)},
          {"exactly_once",
           r.join.duplicates == 0 && r.join.unexpected == 0 && r.join.received == r.join.sent},
          {"latency_us", to_json(r.latency_us)},
          {"fleet", fleet_json(r.fleet)},
          {"edge", proc_json(r.edge)},
          {"edge_rss_before_devices_kib", r.edge_rss_before_kb},
          {"edges", edges},
          {"broker_process", proc_json(r.broker)},
          {"throughput",
           {{"delivered_frames_per_s", r.delivered_frames_per_s},
            {"steady_s", r.steady_s},
            {"steady_frames", r.steady_frames},
            {"drain_s", r.drain_s},
            {"edge_cpu_us_per_frame", r.edge_cpu_us_per_frame},
            {"broker_cpu_us_per_frame", r.broker_cpu_us_per_frame}}},
          {"redis", redis_json},
          {"cost_per_1000_frames_per_s", costs},
          {"cluster", cluster},
          {"rss_series", series},
          {"rss_drift",
           {{"samples", d.samples},
            {"warmup_s", d.warmup_s},
            {"first_kib", d.first_kb},
            {"last_kib", d.last_kb},
            {"min_kib", d.min_kb},
            {"max_kib", d.max_kb},
            {"slope_kib_per_hour", d.slope_kb_per_hour},
            {"flat", d.flat()}}},
          {"targets", targets},
          {"all_targets_met",
           std::all_of(r.targets.begin(), r.targets.end(), [](const Target& t) { return t.met; })},
          {"problems", r.problems},
          {"commands", r.commands},
          {"wall_s", r.wall_s},
          {"dir", r.dir},
          {"dir_removed", r.dir_removed}};
}

}  // namespace dsekp::bench::e2e
