// A command line asking for something impossible that CLI11 cannot see (a malformed HOST:PORT, a
// value that only a config file could have supplied). main() prints it and exits 2, the status
// of every usage error, so that a script can tell a mistyped command (2) from a failure (1).
#pragma once

#include <stdexcept>

namespace dsekp::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace dsekp::cli
