// `dsekp bench edge [--count N] [--devices D] [--encoding json|compact] [--no-csv] [--json]`
// (see bench_edge_command.hpp).
#include "bench_edge_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "bench/edge/edge_bench.hpp"

namespace dsekp::cli {
namespace {

struct BenchEdgeArgs {
  bench::edge::EdgeBenchOptions options;
  std::string encoding = "json";
  bool no_csv = false;
  bool json = false;
};

std::string find_mosquitto(const std::string& given) {
  if (!given.empty()) return given;
  for (const char* p : {"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/bin/mosquitto"})
    if (::access(p, X_OK) == 0) return p;
  throw std::runtime_error("mosquitto not found (install it, or give --mosquitto PATH)");
}

nlohmann::json run_json(const bench::edge::RunFigures& r) {
  nlohmann::json j = {{"messages", r.messages},
                      {"delivered", r.delivered},
                      {"seconds", r.seconds},
                      {"messages_per_s", r.rate},
                      {"complete", r.complete}};
  if (r.mean_processing_us > 0) j["mean_processing_us"] = r.mean_processing_us;
  return j;
}

void print_text(const bench::edge::EdgeBenchResult& r, const BenchEdgeArgs& a) {
  const auto line = [](const char* name, const bench::edge::RunFigures& f) {
    std::printf("  %-6s %9.0f msg/s  (%zu of %zu in %.2f s%s)", name, f.rate, f.delivered,
                f.messages, f.seconds, f.complete ? "" : ", INCOMPLETE");
    if (f.mean_processing_us > 0)
      std::printf("  edge busy %.1f us/frame (ceiling %.0f/s)", f.mean_processing_us,
                  1e6 / f.mean_processing_us);
    std::printf("\n");
  };
  std::printf(
      "dsekp bench edge: %zu messages per run, %zu devices, %s frames (DSEKP %.0f B, PSK "
      "%.0f B), CSV logs %s, one private Mosquitto on loopback\n",
      a.options.count, a.options.devices, a.encoding.c_str(), r.dsekp_frame_bytes,
      r.psk_frame_bytes, a.options.csv ? "on" : "off");
  line("raw", r.raw);
  line("dsekp", r.dsekp);
  line("psk", r.psk);
  std::printf("  ratio dsekp/raw %.3f, psk/raw %.3f; target dsekp/raw >= %.1f: %s\n", r.ratio_dsekp,
              r.ratio_psk, bench::edge::EdgeBenchResult::kTarget, r.target_met ? "met" : "NOT met");
  std::printf("  machine: %u CPUs, load average %.2f %.2f %.2f before, %.2f %.2f %.2f after\n",
              r.cpus, r.load_before[0], r.load_before[1], r.load_before[2], r.load_after[0],
              r.load_after[1], r.load_after[2]);
  if (!r.work_dir.empty()) std::printf("  work directory kept: %s\n", r.work_dir.c_str());
}

}  // namespace

void add_bench_edge_command(CLI::App& bench) {
  auto args = std::make_shared<BenchEdgeArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "edge", "Edge processing rate (DSEKP, PSK) against the broker's raw relay rate");
  cmd->add_option("--count", args->options.count, "Messages per run")->capture_default_str();
  cmd->add_option("--devices", args->options.devices, "Devices the frames are spread over")
      ->capture_default_str();
  cmd->add_option("--encoding", args->encoding, "Frame encoding")
      ->check(CLI::IsMember({"json", "compact"}))
      ->capture_default_str();
  cmd->add_flag("--no-csv", args->no_csv, "Run the edge without its server CSV logs");
  cmd->add_option("--batch-max", args->options.batch_max,
                  "The edge's --batch-max (messages per commit; default: the edge's)");
  cmd->add_option("--mosquitto", args->options.mosquitto, "The broker executable");
  cmd->add_option("--timeout", args->options.timeout_s, "Seconds per run before giving up")
      ->capture_default_str();
  // Hidden: the `dsekp` that runs `edge` (default this executable).
  cmd->add_option("--dsekp", args->options.dsekp_exe, "")->group("");
  cmd->add_flag("--keep", args->options.keep_dir, "Keep the work directory (logs, databases)");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] {
    BenchEdgeArgs& a = *args;
    a.options.compact = a.encoding == "compact";
    a.options.csv = !a.no_csv;
    a.options.mosquitto = find_mosquitto(a.options.mosquitto);
    if (a.options.dsekp_exe.empty())
      a.options.dsekp_exe = std::filesystem::read_symlink("/proc/self/exe").string();
    const bench::edge::EdgeBenchResult r = bench::edge::run_edge_bench(a.options);
    if (!a.json) {
      print_text(r, a);
      return;
    }
    const nlohmann::json j = {
        {"count", a.options.count},
        {"devices", a.options.devices},
        {"encoding", a.encoding},
        {"csv", a.options.csv},
        {"batch_max", a.options.batch_max},  // 0: the edge's default
        {"dsekp_frame_bytes", r.dsekp_frame_bytes},
        {"psk_frame_bytes", r.psk_frame_bytes},
        {"raw", run_json(r.raw)},
        {"dsekp", run_json(r.dsekp)},
        {"psk", run_json(r.psk)},
        {"ratio_dsekp_raw", r.ratio_dsekp},
        {"ratio_psk_raw", r.ratio_psk},
        {"target_ratio", bench::edge::EdgeBenchResult::kTarget},
        {"target_met", r.target_met},
        {"cpus", r.cpus},
        {"load_before", {r.load_before[0], r.load_before[1], r.load_before[2]}},
        {"load_after", {r.load_after[0], r.load_after[1], r.load_after[2]}}};
    std::printf("%s\n", j.dump(2).c_str());
  });
}

}  // namespace dsekp::cli
