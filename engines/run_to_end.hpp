// Running a short command (redis-cli, rabbitmqctl) to its end with a deadline and its output
// captured, for the engines' set-up and inspection.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace dsekp::engines {

struct RunOutput {
  int exit_code = -1;  // 128 + signal when killed
  std::string output;  // stdout and stderr, interleaved
};

/// Runs `argv` (argv[0] a path) with its output in `scratch_dir`; throws std::runtime_error if
/// it has not ended within `timeout` (it is then killed).
RunOutput run_to_end(const std::vector<std::string>& argv, const std::string& scratch_dir,
                     std::chrono::milliseconds timeout);

/// The contents of a file ("" if it cannot be read).
std::string file_text(const std::string& path);

}  // namespace dsekp::engines
