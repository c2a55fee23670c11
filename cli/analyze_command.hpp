// `dsekp analyze`: reads the experiment's CSV logs (docs/LOGS.md) and writes report.md,
// summary.json and the figures (the paper's MATLAB analysis, section 4.5).
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `analyze` subcommand to `app`.
void add_analyze_command(CLI::App& app);

}  // namespace dsekp::cli
