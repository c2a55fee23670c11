// `dsekp device`: the device simulator and load generator (device/).
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `device` subcommand to `app`.
void add_device_command(CLI::App& app);

}  // namespace dsekp::cli
