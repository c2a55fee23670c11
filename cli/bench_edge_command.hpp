// `dsekp bench edge`: the edge's processing rate (DSEKP and PSK frames) against the raw relay
// rate of the same broker, as text or JSON (bench/edge/edge_bench.hpp says what is measured).
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `edge` subcommand to `dsekp bench` (the `bench` subcommand given).
void add_bench_edge_command(CLI::App& bench);

}  // namespace dsekp::cli
