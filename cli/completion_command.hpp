// `dsekp completion bash`: prints a bash completion script for the whole command tree, generated
// from the same CLI11 definitions that parse the arguments, so the two cannot drift. The Debian
// package installs its output as /usr/share/bash-completion/completions/dsekp.
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `completion` subcommand to `app`; call it after every other subcommand is added.
void add_completion_command(CLI::App& app);

}  // namespace dsekp::cli
