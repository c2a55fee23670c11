// `dsekp experiment`: the paper's PSK-vs-DSEKP evaluation end to end on one machine, with its
// report (experiment/, docs/EXPERIMENT.md). The README's main command (`make experiment`).
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `experiment` subcommand to `app`.
void add_experiment_command(CLI::App& app);

}  // namespace dsekp::cli
