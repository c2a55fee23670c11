// `dsekp`: the one command-line entry point. Each subcommand lives in its own file under cli/.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "analyze_command.hpp"
#include "bench_command.hpp"
#include "completion_command.hpp"
#include "device_command.hpp"
#include "edge_command.hpp"
#include "experiment_command.hpp"
#include "keys_command.hpp"
#include "link_command.hpp"
#include "usage_error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"DSEKP: Dynamic Session Enhanced Key Protocol (protocol v1) tools", "dsekp"};
  app.set_version_flag("--version", "dsekp 0.1.0 (protocol v1)");
  app.require_subcommand(1);
  // In the order an operator meets them (`dsekp --help` lists them so): provision devices, run
  // the edge, run devices, then the paper's experiment, its analysis and the benchmarks.
  dsekp::cli::add_keys_command(app);
  dsekp::cli::add_edge_command(app);
  dsekp::cli::add_device_command(app);
  dsekp::cli::add_experiment_command(app);
  dsekp::cli::add_analyze_command(app);
  dsekp::cli::add_bench_command(app);
  dsekp::cli::add_link_command(app);
  dsekp::cli::add_completion_command(app);  // last: it walks the others
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version print and succeed; every other parse error is a usage error: exit 2, the
    // code the subcommands use for bad arguments (CLI11's own codes differ per error kind).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const dsekp::cli::UsageError& e) {
    std::fprintf(stderr, "dsekp: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsekp: %s\n", e.what());
    return 1;
  }
  return 0;
}
