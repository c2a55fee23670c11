// Finding the engines' programs (see executables.hpp).
#include "engines/executables.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

namespace dsekp::engines {
namespace {

std::vector<std::string> split_dirs(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t colon = std::min(text.find(':', start), text.size());
    if (colon > start) out.emplace_back(text.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

}  // namespace

std::string find_executable(const std::string& name, const std::string& preferred_dirs) {
  std::vector<std::string> dirs = split_dirs(preferred_dirs);
  if (const char* path = std::getenv("PATH"))
    for (std::string& dir : split_dirs(path)) dirs.push_back(std::move(dir));
  for (const std::string& dir : dirs) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

std::string redis_server_path() {
  return find_executable("redis-server", "/usr/bin:/usr/local/bin:/usr/sbin");
}

std::string redis_cli_path() {
  return find_executable("redis-cli", "/usr/bin:/usr/local/bin");
}

std::string rabbitmq_server_path() {
  if (epmd_path().empty()) return "";
  // Debian's /usr/sbin/rabbitmq-server is a wrapper that switches to the rabbitmq user; the
  // script behind it runs the node as the caller, with the caller's environment.
  return find_executable("rabbitmq-server", "/usr/lib/rabbitmq/bin:/usr/sbin");
}

std::string rabbitmqctl_path() {
  return find_executable("rabbitmqctl", "/usr/lib/rabbitmq/bin:/usr/sbin");
}

std::string ip_path() {
  return find_executable("ip", "/usr/sbin:/sbin:/usr/bin:/bin");
}

std::string epmd_path() {
  return find_executable("epmd", "/usr/bin:/usr/lib/erlang/bin");
}

}  // namespace dsekp::engines
