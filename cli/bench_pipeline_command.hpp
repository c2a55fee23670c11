// `dsekp bench pipeline`: the edge's own CPU per DATA frame (DSEKP, PSK) without a transport, as
// text or JSON (bench/pipeline/pipeline_bench.hpp says what is measured).
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `pipeline` subcommand to `dsekp bench` (the `bench` subcommand given).
void add_bench_pipeline_command(CLI::App& bench);

}  // namespace dsekp::cli
