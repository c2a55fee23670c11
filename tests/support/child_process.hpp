// Child processes for the CLI and broker tests: spawn with stdout/stderr sent to files, wait with
// a deadline, and kill. Every wait is bounded so that a hung child fails a test instead of
// hanging ctest.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace dsekp::test {

class ChildProcess {
 public:
  /// Starts `argv[0]` (a path) with `argv`; stdout and stderr go to the given files.
  ChildProcess(const std::vector<std::string>& argv, const std::string& stdout_file,
               const std::string& stderr_file);
  /// Kills the child (SIGKILL) if it is still running and reaps it.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  /// The exit status (128 + signal if killed) once the child ended within `timeout`.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  /// True while the child has not exited (reaps it if it has).
  bool running();
  /// SIGTERM, then SIGKILL if it has not ended after `grace`; always reaps.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
  void signal(int sig);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs a command to completion (at most `timeout`), capturing its output through files in
/// `scratch_dir`. Throws if it does not finish in time.
RunResult run_command(const std::vector<std::string>& argv, const std::string& scratch_dir,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(30000));

/// The contents of a file ("" if it cannot be read).
std::string read_file(const std::string& path);

}  // namespace dsekp::test
