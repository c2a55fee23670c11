// Where the engines' programs are: Debian's install paths first, then PATH. The engines run
// wherever the `dsekp` package is installed, so nothing is fixed at build time.
#pragma once

#include <string>

namespace dsekp::engines {

/// The first executable file named `name` in `preferred_dirs` (searched in order), then in PATH;
/// "" if there is none.
std::string find_executable(const std::string& name, const std::string& preferred_dirs);

/// redis-server and redis-cli (package redis-server / redis-tools); "" if not installed.
std::string redis_server_path();
std::string redis_cli_path();
/// rabbitmq-server ("" unless epmd, from Erlang, is installed too), rabbitmqctl (package
/// rabbitmq-server) and epmd; "" if not installed.
std::string rabbitmq_server_path();
std::string rabbitmqctl_path();
std::string epmd_path();
/// iproute2's `ip` (network namespaces for partition tests); "" if not installed.
std::string ip_path();

}  // namespace dsekp::engines
