// The edge daemon's plain options, each declared once: its config-file key (its flag is "--" and
// the key with '-' for '_'), its help text, the EdgeDaemonOptions member it sets, its range, and
// whether SIGHUP applies it. The command line (cli/edge_command.cpp), the config file
// (edge_config_file.cpp) and the SIGHUP report (reloadable_options.cpp) all read this one table,
// so a new option is one row here plus its member in edge_daemon.hpp.
//
// Options of a shape of their own stay beside the table, in those three places: --broker
// (HOST:PORT), --username (unset is not empty), the passwords' environment variables, --no-csv /
// --no-republish (flags that turn an option off), --log-format and --log-level (named values).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "edge/daemon/edge_daemon.hpp"

namespace dsekp::edge::daemon {

enum class OptionReload : std::uint8_t {
  restart,  // a change needs a restart (SIGHUP says so)
  sighup,   // applied by SIGHUP (reloadable_options.hpp)
  never,    // not compared (the hidden fault-injection flag)
};

struct OptionSpec {
  using Member = std::variant<std::string EdgeDaemonOptions::*, std::uint32_t EdgeDaemonOptions::*,
                              bool EdgeDaemonOptions::*>;

  std::string_view key;   // the config-file key, e.g. "state_db"
  std::string_view help;  // "" for a hidden flag
  Member member;
  std::uint32_t min = 0;  // numbers only
  std::uint32_t max = std::numeric_limits<std::uint32_t>::max();
  OptionReload reload = OptionReload::restart;
  bool on_command_line = true;  // false: config file only, or a flag of its own shape
  bool in_config_file = true;   // false: command line only
  std::span<const std::string_view> choices = {};  // strings: the values allowed ({} = any)
};

/// Every plain option, in --help order. A bool option's default is off; its flag (`--x`,
/// `--x=true`, `--x=false`) and its config-file key set it either way, the flag winning.
[[nodiscard]] std::span<const OptionSpec> edge_option_specs() noexcept;

/// "--state-db" for the key "state_db".
[[nodiscard]] std::string flag_of(const OptionSpec& spec);

/// Copies the option `spec` describes from `from` to `to`.
void copy_option(const OptionSpec& spec, const EdgeDaemonOptions& from, EdgeDaemonOptions& to);

/// Whether `a` and `b` differ in the option `spec` describes.
[[nodiscard]] bool option_differs(const OptionSpec& spec, const EdgeDaemonOptions& a,
                                  const EdgeDaemonOptions& b);

}  // namespace dsekp::edge::daemon
