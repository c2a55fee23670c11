// `dsekp link` (placeholder: the subcommand exists, its implementation is being written).
#include "link_command.hpp"

#include <stdexcept>

namespace dsekp::cli {

void add_link_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("link", "the user-space link emulator (linkemu/) (not implemented yet)");
  cmd->callback([] { throw std::runtime_error("dsekp link: not implemented yet"); });
}

}  // namespace dsekp::cli
