// The build's paths (see build_paths.hpp), from the compile definitions of this file only.
#include "tests/support/build_paths.hpp"

namespace dsekp::test {

const std::string& cli_path() {
  static const std::string path = DSEKP_CLI_PATH;
  return path;
}

const std::string& source_dir() {
  static const std::string path = DSEKP_SOURCE_DIR;
  return path;
}

}  // namespace dsekp::test
