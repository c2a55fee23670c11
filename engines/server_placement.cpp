// Running a server in its placement's network namespace (see server_placement.hpp).
#include "engines/server_placement.hpp"

#include "engines/executables.hpp"

namespace dsekp::engines {

std::vector<std::string> placed_argv(const ServerPlacement& placement,
                                     std::vector<std::string> argv) {
  if (placement.netns.empty()) return argv;
  argv.insert(argv.begin(), {ip_path(), "netns", "exec", placement.netns});
  return argv;
}

}  // namespace dsekp::engines
