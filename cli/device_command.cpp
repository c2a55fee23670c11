// `dsekp device` (placeholder: the subcommand exists, its implementation is being written).
#include "device_command.hpp"

#include <stdexcept>

namespace dsekp::cli {

void add_device_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "device", "the device simulator and load generator (device/) (not implemented yet)");
  cmd->callback([] { throw std::runtime_error("dsekp device: not implemented yet"); });
}

}  // namespace dsekp::cli
