// `dsekp experiment`: the paper's evaluation end to end (experiment/).
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `experiment` subcommand to `app`.
void add_experiment_command(CLI::App& app);

}  // namespace dsekp::cli
