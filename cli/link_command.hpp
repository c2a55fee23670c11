// `dsekp link`: the user-space link emulator (linkemu/).
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `link` subcommand to `app`.
void add_link_command(CLI::App& app);

}  // namespace dsekp::cli
