// `dsekp edge`: runs the edge daemon (edge/daemon/edge_daemon.hpp) until SIGTERM/SIGINT.
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `edge` subcommand to `app`. Start-up failures are thrown as std::runtime_error.
void add_edge_command(CLI::App& app);

}  // namespace dsekp::cli
