// Spawning, waiting for and killing child processes (see child_process.hpp).
#include "tests/support/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace dsekp::test {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& stdout_file,
                           const std::string& stderr_file) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
}

ChildProcess::~ChildProcess() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    (void)wait_for(std::chrono::milliseconds(5000));
  }
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!status_) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (r < 0) {
      status_ = -1;  // not our child any more: nothing to wait for
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status_;
}

bool ChildProcess::running() {
  return !wait_for(std::chrono::milliseconds(0)).has_value();
}

void ChildProcess::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  signal(SIGTERM);
  if (wait_for(grace)) return;
  signal(SIGKILL);
  (void)wait_for(std::chrono::milliseconds(5000));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

RunResult run_command(const std::vector<std::string>& argv, const std::string& scratch_dir,
                      std::chrono::milliseconds timeout) {
  const std::string out_file = scratch_dir + "/cmd.stdout";
  const std::string err_file = scratch_dir + "/cmd.stderr";
  ChildProcess child(argv, out_file, err_file);
  const auto status = child.wait_for(timeout);
  if (!status) throw std::runtime_error("command did not finish in time: " + argv[0]);
  return {*status, read_file(out_file), read_file(err_file)};
}

}  // namespace dsekp::test
