// `dsekp bench pipeline` (see bench_pipeline_command.hpp).
#include "bench_pipeline_command.hpp"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/pipeline/pipeline_bench.hpp"

namespace dsekp::cli {
namespace {

struct BenchPipelineArgs {
  bench::pipeline::PipelineBenchOptions options;
  std::string encoding = "json";
  bool no_csv = false;
  bool as_json = false;
};

void print_text(const bench::pipeline::PipelineFigures& f, const BenchPipelineArgs& a) {
  std::printf(
      "dsekp bench pipeline: the edge's service, SQLite store and sinks in-process, no transport; "
      "%zu devices, %zu %s frames per mode and repetition, %zu per commit, CSV logs %s\n",
      a.options.devices, a.options.count, a.encoding.c_str(), a.options.batch,
      a.options.csv ? "on" : "off");
  for (std::size_t i = 0; i < f.dsekp_us_per_frame.size(); ++i)
    std::printf("  repetition %zu: dsekp %.2f us/frame, psk %.2f us/frame (thread CPU)\n", i + 1,
                f.dsekp_us_per_frame[i], f.psk_us_per_frame[i]);
  std::printf(
      "  medians: dsekp %.2f us/frame, psk %.2f us/frame; DSEKP / PSK %.2f (the median of "
      "the repetitions' ratios)\n",
      f.dsekp_median, f.psk_median, f.dsekp_over_psk);
}

}  // namespace

void add_bench_pipeline_command(CLI::App& bench) {
  auto args = std::make_shared<BenchPipelineArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "pipeline",
      "The edge's own CPU per frame (DSEKP, PSK): service, store and sinks without a "
      "transport");
  cmd->add_option("--count", args->options.count, "Frames per mode and repetition")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  cmd->add_option("--devices", args->options.devices, "Devices the frames are spread over")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  cmd->add_option("--batch", args->options.batch, "Messages per commit (the edge's --batch-max)")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cmd->add_option("--repetitions", args->options.repetitions, "DSEKP then PSK, this many times")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--encoding", args->encoding, "Frame encoding")
      ->check(CLI::IsMember({"json", "compact"}))
      ->capture_default_str();
  cmd->add_flag("--no-csv", args->no_csv, "Without the server CSV logs");
  cmd->add_flag("--json", args->as_json, "Print JSON");
  cmd->callback([args] {
    BenchPipelineArgs a = *args;
    a.options.compact = a.encoding == "compact";
    a.options.csv = !a.no_csv;
    const auto f = bench::pipeline::run_pipeline_bench(a.options);
    if (!a.as_json) return print_text(f, a);
    const nlohmann::json j = {{"benchmark", "pipeline"},
                              {"count", a.options.count},
                              {"devices", a.options.devices},
                              {"batch", a.options.batch},
                              {"repetitions", a.options.repetitions},
                              {"encoding", a.encoding},
                              {"csv", a.options.csv},
                              {"dsekp_us_per_frame", f.dsekp_us_per_frame},
                              {"psk_us_per_frame", f.psk_us_per_frame},
                              {"dsekp_median_us_per_frame", f.dsekp_median},
                              {"psk_median_us_per_frame", f.psk_median},
                              {"dsekp_over_psk", f.dsekp_over_psk}};
    std::printf("%s\n", j.dump(2).c_str());
  });
}

}  // namespace dsekp::cli
