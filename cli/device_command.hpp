// `dsekp device`: the device simulator and load generator (device/, docs/DEVICE.md): N simulated
// ESP32 clients in one process, each with its own MQTT connection and identity, DSEKP or the PSK
// baseline, with the client CSV logs and a summary.
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `device` subcommand to `app`.
void add_device_command(CLI::App& app);

}  // namespace dsekp::cli
