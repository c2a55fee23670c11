// Where this build and its checkout are, for the tests that run the `dsekp` CLI or read files
// of the checkout. The paths are compiled into build_paths.cpp alone, so that no other test
// object depends on where the checkout is: ccache then finds those objects again when CI builds
// a fresh clone in another folder.
#pragma once

#include <string>

namespace dsekp::test {

/// The `dsekp` executable of this build.
[[nodiscard]] const std::string& cli_path();
/// The checkout's top folder.
[[nodiscard]] const std::string& source_dir();

}  // namespace dsekp::test
