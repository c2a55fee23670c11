// Whether a command left processes behind: the live processes whose command line names its
// working folder or that run in it (a broker, an edge, a device fleet, an Erlang VM of a cluster
// node; a Redis node, which rewrites its command line, by its working directory).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace dsekp::test {

/// Live processes whose command line or working directory mentions `marker` (our working
/// folder).
inline std::vector<std::string> processes_mentioning(const std::string& marker) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(pid) == ::getpid()) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');
    if (paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] == 'Z') continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline(std::istreambuf_iterator<char>(in), {});
    for (auto& ch : cmdline)
      if (ch == '\0') ch = ' ';
    std::error_code ec;
    const std::string cwd = std::filesystem::read_symlink(entry.path() / "cwd", ec).string();
    if (cmdline.find(marker) != std::string::npos || (!ec && cwd.find(marker) != std::string::npos))
      found.push_back(pid + ": " + cmdline + " (in " + cwd + ")");
  }
  return found;
}

inline void expect_nothing_left(const std::string& marker) {
  std::vector<std::string> left;
  for (int i = 0; i < 100; ++i) {
    left = processes_mentioning(marker);
    if (left.empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string list;
  for (const auto& p : left) list += "  " + p + "\n";
  ADD_FAILURE() << "processes left behind:\n" << list;
}

}  // namespace dsekp::test
