// `dsekp experiment` (placeholder: the subcommand exists, its implementation is being written).
#include "experiment_command.hpp"

#include <stdexcept>

namespace dsekp::cli {

void add_experiment_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "experiment", "the paper's evaluation end to end (experiment/) (not implemented yet)");
  cmd->callback([] { throw std::runtime_error("dsekp experiment: not implemented yet"); });
}

}  // namespace dsekp::cli
