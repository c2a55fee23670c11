// `dsekp bench edge [--count N] [--rounds R] [--devices D] [--encoding json|compact] [--no-csv]
// [--mqtt-client libmosquitto|builtin] [--json]`
// (see bench_edge_command.hpp).
#include "bench_edge_command.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/edge/edge_bench.hpp"
#include "edge/daemon/edge_daemon.hpp"
#include "experiment/broker.hpp"

namespace dsekp::cli {
namespace {

struct BenchEdgeArgs {
  bench::edge::EdgeBenchOptions options;
  std::string encoding = "json";
  bool no_csv = false;
  bool json = false;
};

nlohmann::json drain_json(const bench::edge::DrainFigures& r) {
  return {{"messages", r.messages},
          {"delivered", r.delivered},
          {"complete", r.complete},
          {"seconds", r.seconds},
          {"messages_per_s", r.rate},
          {"cpu_s", r.cpu_s},
          {"edge_cpu_us_per_frame", r.cpu_us_per_frame},
          {"user_cpu_us_per_frame", r.user_us_per_frame},
          {"system_cpu_us_per_frame", r.system_us_per_frame},
          {"read_calls_per_frame",
           r.system_calls_counted ? nlohmann::json(r.reads_per_frame) : nlohmann::json()},
          {"write_calls_per_frame",
           r.system_calls_counted ? nlohmann::json(r.writes_per_frame) : nlohmann::json()}};
}

// Every round's drains, in the order they ran (the top-level dsekp/psk are the medians).
nlohmann::json rounds_json(const bench::edge::EdgeBenchResult& r) {
  nlohmann::json rounds = nlohmann::json::array();
  for (std::size_t i = 0; i < r.dsekp_rounds.size() && i < r.psk_rounds.size(); ++i)
    rounds.push_back({{"first", i % 2 == 0 ? "dsekp" : "psk"},
                      {"dsekp", drain_json(r.dsekp_rounds[i])},
                      {"psk", drain_json(r.psk_rounds[i])}});
  return rounds;
}

const char* verdict(const bench::edge::EdgeBenchResult& r, bool met) {
  if (!r.complete) return "not judged (a drain was INCOMPLETE)";
  return met ? "met" : "NOT met";
}

void print_text(const bench::edge::EdgeBenchResult& r, const BenchEdgeArgs& a) {
  using bench::edge::EdgeBenchResult;
  const auto line = [](const char* name, const bench::edge::DrainFigures& f) {
    std::printf(
        "  %-7s %9.0f msg/s  (%zu of %zu in %.3f s%s)  CPU %.3f s = %.2f us/frame (user %.2f, "
        "system %.2f); ",
        name, f.rate, f.delivered, f.messages, f.seconds, f.complete ? "" : ", INCOMPLETE", f.cpu_s,
        f.cpu_us_per_frame, f.user_us_per_frame, f.system_us_per_frame);
    if (f.system_calls_counted) {
      std::printf("system calls per frame: %.2f reads, %.2f writes\n", f.reads_per_frame,
                  f.writes_per_frame);
    } else {
      std::printf("system calls not counted (a wrapper ran the edge)\n");
    }
  };
  std::printf(
      "dsekp bench edge: a backlog of %zu frames drained, %zu devices, %s frames (DSEKP %.0f B, "
      "PSK %.0f B), CSV logs %s, MQTT client %s, one private Mosquitto on loopback\n",
      a.options.count, a.options.devices, a.encoding.c_str(), r.dsekp_frame_bytes,
      r.psk_frame_bytes, a.options.csv ? "on" : "off", r.mqtt_client.c_str());
  std::printf(
      "  the broker's ceiling: a subscriber that only counts, on libmosquitto and on the built-in "
      "client (the faster, %.0f msg/s, is the ceiling):\n",
      r.broker_ceiling_rate);
  line("libmosq", r.broker);
  line("builtin", r.broker_builtin);
  std::printf("  the edge:\n");
  if (r.dsekp_rounds.size() > 1) {
    for (std::size_t i = 0; i < r.dsekp_rounds.size(); ++i) {
      std::printf("  round %zu (%s first):\n", i + 1, i % 2 == 0 ? "DSEKP" : "PSK");
      line("dsekp", r.dsekp_rounds[i]);
      line("psk", r.psk_rounds[i]);
    }
    std::printf("  the rounds' medians (CPU per frame):\n");
  }
  line("dsekp", r.dsekp);
  line("psk", r.psk);
  std::printf("  edge CPU net of an idle start and stop (%.3f s)\n", r.idle_edge_cpu_s);
  std::printf("  target: <= %.1f us of edge CPU per DSEKP frame: %.2f, %s\n",
              EdgeBenchResult::kTargetCpuUs, r.dsekp.cpu_us_per_frame,
              verdict(r, r.cpu_target_met));
  std::printf("  target: DSEKP CPU <= %.1f x PSK: %.2f x%s, %s\n", EdgeBenchResult::kTargetOverPsk,
              r.cpu_dsekp_over_psk,
              r.dsekp_rounds.size() > 1 ? " (the median of the rounds' ratios)" : "",
              verdict(r, r.over_psk_target_met));
  std::printf("  target: edge rate >= %.1f x the broker's: dsekp %.3f, psk %.3f, %s\n",
              EdgeBenchResult::kTargetRatio, r.ratio_dsekp, r.ratio_psk,
              verdict(r, r.ratio_target_met));
  std::printf("  machine: %u CPUs, load average %.2f %.2f %.2f before, %.2f %.2f %.2f after\n",
              r.cpus, r.load_before[0], r.load_before[1], r.load_before[2], r.load_after[0],
              r.load_after[1], r.load_after[2]);
  if (!r.work_dir.empty()) std::printf("  work directory kept: %s\n", r.work_dir.c_str());
}

}  // namespace

void add_bench_edge_command(CLI::App& bench) {
  auto args = std::make_shared<BenchEdgeArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "edge",
      "Edge CPU per frame draining a backlog (DSEKP, PSK), and its rate against the broker's");
  cmd->add_option("--count", args->options.count, "Frames queued per drain")->capture_default_str();
  cmd->add_option("--devices", args->options.devices, "Devices the frames are spread over")
      ->capture_default_str();
  cmd->add_option("--encoding", args->encoding, "Frame encoding")
      ->check(CLI::IsMember({"json", "compact"}))
      ->capture_default_str();
  cmd->add_flag("--no-csv", args->no_csv, "Run the edge without its server CSV logs");
  cmd->add_option("--batch-max", args->options.batch_max,
                  "The edge's --batch-max (messages per commit; default: the edge's)");
  cmd->add_option("--batch-wait-ms", args->options.batch_wait_ms,
                  "The edge's --batch-wait-ms (how long a burst waits for more messages; default: "
                  "the edge's)");
  cmd->add_option("--rounds", args->options.rounds,
                  "Drains per mode, DSEKP and PSK alternating; figures and ratio are the medians")
      ->check(CLI::Range(1, 15))
      ->capture_default_str();
  cmd->add_option("--mosquitto", args->options.mosquitto, "The broker executable");
  cmd->add_option("--timeout", args->options.timeout_s, "Seconds per run before giving up")
      ->capture_default_str();
  // Hidden: the `dsekp` that runs `edge` (default this executable).
  cmd->add_option("--dsekp", args->options.dsekp_exe, "")->group("");
  // Hidden: a profiler's command line put before the edge's in the drains.
  cmd->add_option("--drain-wrapper", args->options.drain_wrapper, "")->group("");
  cmd->add_option("--mqtt-client", args->options.mqtt_client,
                  "The edge's MQTT client (default: the edge's default); the broker's ceiling is "
                  "measured on both")
      ->check(CLI::IsMember(std::vector<std::string>(edge::daemon::kMqttClients.begin(),
                                                     edge::daemon::kMqttClients.end())));
  cmd->add_flag("--keep", args->options.keep_dir, "Keep the work directory (logs, databases)");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] {
    BenchEdgeArgs& a = *args;
    a.options.compact = a.encoding == "compact";
    a.options.csv = !a.no_csv;
    if (a.options.mosquitto.empty()) a.options.mosquitto = experiment::find_mosquitto();
    if (a.options.dsekp_exe.empty())
      a.options.dsekp_exe = std::filesystem::read_symlink("/proc/self/exe").string();
    const bench::edge::EdgeBenchResult r = bench::edge::run_edge_bench(a.options);
    if (!a.json) {
      print_text(r, a);
      return;
    }
    using bench::edge::EdgeBenchResult;
    const nlohmann::json j = {
        {"count", a.options.count},
        {"rounds_run", a.options.rounds},
        {"devices", a.options.devices},
        {"encoding", a.encoding},
        {"csv", a.options.csv},
        {"batch_max", a.options.batch_max},  // 0: the edge's default
        {"batch_wait_ms", a.options.batch_wait_ms ? nlohmann::json(*a.options.batch_wait_ms)
                                                  : nlohmann::json()},  // null: the edge's default
        {"dsekp_frame_bytes", r.dsekp_frame_bytes},
        {"psk_frame_bytes", r.psk_frame_bytes},
        {"mqtt_client", r.mqtt_client},
        {"broker", drain_json(r.broker)},
        {"broker_builtin", drain_json(r.broker_builtin)},
        {"broker_ceiling_messages_per_s", r.broker_ceiling_rate},
        {"rounds", rounds_json(r)},
        {"dsekp", drain_json(r.dsekp)},
        {"psk", drain_json(r.psk)},
        {"idle_edge_cpu_s", r.idle_edge_cpu_s},
        {"ratio_dsekp_broker", r.ratio_dsekp},
        {"ratio_psk_broker", r.ratio_psk},
        {"cpu_dsekp_over_psk", r.cpu_dsekp_over_psk},
        {"complete", r.complete},  // false: a drain fell short, and no target is met
        {"targets",
         {{"edge_cpu_us_per_dsekp_frame",
           {{"value", r.dsekp.cpu_us_per_frame},
            {"limit", EdgeBenchResult::kTargetCpuUs},
            {"met", r.cpu_target_met}}},
          {"cpu_dsekp_over_psk",
           {{"value", r.cpu_dsekp_over_psk},
            {"limit", EdgeBenchResult::kTargetOverPsk},
            {"met", r.over_psk_target_met}}},
          {"ratio_dsekp_broker",
           {{"value", r.ratio_dsekp},
            {"limit", EdgeBenchResult::kTargetRatio},
            {"met", r.ratio_target_met}}}}},
        {"cpus", r.cpus},
        {"load_before", {r.load_before[0], r.load_before[1], r.load_before[2]}},
        {"load_after", {r.load_after[0], r.load_after[1], r.load_after[2]}}};
    std::printf("%s\n", j.dump(2).c_str());
  });
}

}  // namespace dsekp::cli
