// `dsekp keys`: the device registry from the command line. Provisioning (add, rotate: prints the
// device's material as JSON or a C header), inspection (list, show), removal, and the Mosquitto
// password + ACL files (broker-config). All work on the SQLite database the edge reads (--db);
// a running edge sees every change without a restart (edge/registry/device_registry.hpp).
#pragma once

#include <CLI/CLI.hpp>

namespace dsekp::cli {

/// Adds the `keys` subcommand and its add, list, show, remove, rotate and broker-config
/// subcommands to `app`. Failures are thrown as std::runtime_error with the registry's message.
void add_keys_command(CLI::App& app);

}  // namespace dsekp::cli
