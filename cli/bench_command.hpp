// `dsekp bench`: the measurements of the protocol core and the edge's state (handshake cost
// against TLS 1.3, frame sizes and per-frame costs, session state size), end to end on a real
// broker (latency PSK vs DSEKP, 10,000-device scale, edge throughput), printed as text or JSON.
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `bench` subcommand and its `handshake`, `frames`, `sessions`, `e2e`, `scale` and `edge`
/// subcommands to `app`.
void add_bench_command(CLI::App& app);

}  // namespace dsekp::cli
