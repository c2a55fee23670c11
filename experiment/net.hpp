// Loopback networking helpers for the experiment: a free port for the private broker, "is it
// accepting connections yet", and HOST:PORT parsing for --broker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dsekp::experiment {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
  [[nodiscard]] std::string str() const { return host + ":" + std::to_string(port); }
};

/// Parses "HOST:PORT" (port 1..65535, host non-empty). Throws std::invalid_argument naming `what`
/// (e.g. "--broker") and the text.
HostPort parse_host_port(std::string_view text, std::string_view what);

/// A loopback port that was free a moment ago (the kernel's choice for an ephemeral bind).
/// Another process can take it before we use it; callers retry on failure.
std::uint16_t free_loopback_port();

/// True if a TCP connection to host:port (an IPv4 address or a resolvable name) succeeds within
/// about a second.
bool accepts_tcp(const HostPort& address);

}  // namespace dsekp::experiment
