// `dsekp link`: the user-space link emulator (linkemu/) as a program.
//
//   dsekp link --listen HOST:PORT --target HOST:PORT [--link SPEC] [--seed S] [--stats-json FILE]
//
// Relays every connection accepted on --listen (port 0 = any free port) to --target through the
// emulated link. When listening it prints exactly one line on stdout and flushes it:
// `dsekp link: listening on ADDRESS:PORT`; it runs until SIGINT/SIGTERM (exit 0), then writes
// --stats-json. Bad arguments: exit 2 with a message naming the option (and the SPEC key).
// Cannot listen: exit 1.
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `link` subcommand to `app`.
void add_link_command(CLI::App& app);

}  // namespace dsekp::cli
