// Where a private server listens: an address and, for partition tests, the network namespace it
// runs in (tests/support/host_network.hpp makes them). Default: 127.0.0.1 in this namespace.
#pragma once

#include <string>
#include <vector>

namespace dsekp::engines {

struct ServerPlacement {
  std::string host = "127.0.0.1";
  std::string netns;  // empty: this process's
};

/// `argv` run in the placement's namespace (`ip netns exec NS argv...`, which enters it and execs
/// the program: the child is still that program); `argv` itself when there is none.
std::vector<std::string> placed_argv(const ServerPlacement& placement,
                                     std::vector<std::string> argv);

}  // namespace dsekp::engines
