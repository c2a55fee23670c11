// Network namespaces on a bridge, for partition tests (see host_network.hpp).
#include "tests/support/host_network.hpp"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "engines/executables.hpp"
#include "engines/run_to_end.hpp"

namespace dsekp::test {
namespace {

/// Runs `ip args...`; throws with its output on failure.
void ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {engines::ip_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  const engines::RunOutput r = engines::run_to_end(argv, "/tmp", std::chrono::seconds(10));
  if (r.exit_code != 0) {
    std::string line = "ip";
    for (const std::string& a : args) line += " " + a;
    throw std::runtime_error(line + " failed: " + r.output);
  }
}

/// Runs `ip args...`, ignoring a failure (clean-up of what may not exist).
void ip_quietly(const std::vector<std::string>& args) noexcept {
  try {
    ip(args);
  } catch (...) {
  }
}

/// Removes the namespaces and bridges of earlier runs whose process is gone.
void remove_leftovers() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ec)) {
    const std::string name = entry.path().filename();
    if (!name.starts_with("dsekp-")) continue;
    const std::string pid = name.substr(6, name.find('-', 6) - 6);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0) continue;
    ip_quietly({"netns", "delete", name});
    ip_quietly({"link", "delete", "dsb" + pid});
  }
}

}  // namespace

std::string HostNetwork::unavailable_reason() {
  if (::geteuid() != 0) return "partition tests need root (network namespaces)";
  if (engines::ip_path().empty()) return "partition tests need iproute2's `ip`";
  // Root may still lack the capability (a container without CAP_NET_ADMIN): try one.
  const std::string probe = "dsekp-" + std::to_string(::getpid()) + "-probe";
  try {
    ip({"netns", "add", probe});
  } catch (const std::exception& e) {
    return std::string("partition tests cannot make a network namespace here: ") + e.what();
  }
  ip_quietly({"netns", "delete", probe});
  return "";
}

HostNetwork::HostNetwork(int hosts) {
  if (const std::string why = unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  remove_leftovers();
  const auto pid = static_cast<unsigned>(::getpid());
  const std::string tag = std::to_string(pid);
  prefix_ = "10." + std::to_string(100 + pid % 100) + "." + std::to_string(pid / 100 % 250) + ".";
  bridge_ = "dsb" + tag;
  try {
    ip({"link", "add", bridge_, "type", "bridge"});
    ip({"addr", "add", prefix_ + "1/24", "dev", bridge_});
    ip({"link", "set", bridge_, "up"});
    for (int i = 0; i < hosts; ++i) {
      const std::string ns = "dsekp-" + tag + "-" + std::to_string(i);
      const std::string outside = "dsv" + tag + "n" + std::to_string(i);
      const std::string inside = "dsp" + tag + "n" + std::to_string(i);
      ip({"netns", "add", ns});
      namespaces_.push_back(ns);
      ip({"link", "add", outside, "type", "veth", "peer", "name", inside});
      bridge_ends_.push_back(outside);
      ip({"link", "set", inside, "netns", ns});
      ip({"link", "set", outside, "master", bridge_});
      ip({"link", "set", outside, "up"});
      ip({"-n", ns, "addr", "add", address(i) + "/24", "dev", inside});
      ip({"-n", ns, "link", "set", inside, "up"});
      ip({"-n", ns, "link", "set", "lo", "up"});
    }
  } catch (...) {
    remove_all();
    throw;
  }
}

HostNetwork::~HostNetwork() {
  remove_all();
}

void HostNetwork::remove_all() noexcept {
  for (const std::string& ns : namespaces_) ip_quietly({"netns", "delete", ns});
  for (const std::string& end : bridge_ends_) ip_quietly({"link", "delete", end});
  if (!bridge_.empty()) ip_quietly({"link", "delete", bridge_});
  namespaces_.clear();
  bridge_ends_.clear();
}

std::string HostNetwork::address(int host) const {
  return prefix_ + std::to_string(10 + host);
}

void HostNetwork::cut(int host) {
  ip({"link", "set", bridge_ends_.at(index(host)), "down"});
}

void HostNetwork::heal(int host) {
  ip({"link", "set", bridge_ends_.at(index(host)), "up"});
}

}  // namespace dsekp::test
