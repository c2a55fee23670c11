// EdgeRunner: `dsekp edge` as a child process that a test starts, SIGKILLs, SIGTERMs and
// restarts, each start with its own stderr file and a fresh ready file to wait for.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {

class EdgeRunner {
 public:
  EdgeRunner(const dsekp::test::TempDir& dir, std::vector<std::string> args)
      : dir_(dir), args_(std::move(args)) {}

  /// Starts the edge and waits for its ready file (a fresh one: the old one is removed first).
  /// With a persistent session the broker sends the queued messages before the SUBACKs, so the
  /// ready file comes after the backlog; `wait_ready` false waits only for the connection.
  ::testing::AssertionResult start(bool wait_ready = true) {
    const std::string ready = dir_.file("edge.ready");
    std::filesystem::remove(ready);
    std::vector<std::string> argv = args_;
    argv.insert(argv.end(), {"--ready-file", ready});
    err_file_ = dir_.file("edge-" + std::to_string(++starts_) + ".err");
    process_ = std::make_unique<dsekp::test::ChildProcess>(argv, dir_.file("edge.out"), err_file_);
    const bool up = wait_until(
        [&] {
          return wait_ready ? std::filesystem::exists(ready)
                            : stderr_text().find("connected to") != std::string::npos;
        },
        std::chrono::seconds(10));
    if (!up) return ::testing::AssertionFailure() << "edge not up: " << stderr_text();
    return ::testing::AssertionSuccess();
  }
  void kill() {
    process_->signal(SIGKILL);
    const auto status = process_->wait_for(std::chrono::seconds(5));
    EXPECT_EQ(status, std::optional<int>(128 + SIGKILL));
  }
  void signal(int sig) { process_->signal(sig); }
  std::optional<int> terminate() {
    process_->signal(SIGTERM);
    return process_->wait_for(std::chrono::seconds(10));
  }
  [[nodiscard]] std::string stderr_text() const { return dsekp::test::read_file(err_file_); }
  /// The running edge's peak resident memory (VmHWM), kB; 0 if it cannot be read.
  [[nodiscard]] long peak_rss_kb() const {
    if (!process_) return 0;
    const std::string status =
        dsekp::test::read_file("/proc/" + std::to_string(process_->pid()) + "/status");
    const std::size_t at = status.find("VmHWM:");
    return at == std::string::npos ? 0 : std::strtol(status.c_str() + at + 6, nullptr, 10);
  }
  /// All the edges' stderr, for failure messages and the replay count.
  [[nodiscard]] std::string all_stderr() const {
    std::string out;
    for (int i = 1; i <= starts_; ++i)
      out += dsekp::test::read_file(dir_.file("edge-" + std::to_string(i) + ".err"));
    return out;
  }

 private:
  const dsekp::test::TempDir& dir_;
  std::vector<std::string> args_;
  std::unique_ptr<dsekp::test::ChildProcess> process_;
  std::string err_file_;
  int starts_ = 0;
};

}  // namespace dsekp::edge::testing
