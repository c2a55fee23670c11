// `dsekp keys serve`: the provisioning control API (edge/control_api/control_server.hpp) on a
// loopback address, behind a bearer token read from a file.
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds `serve` to the `keys` subcommand.
void add_keys_serve_command(CLI::App& keys);

}  // namespace dsekp::cli
