// "HOST:PORT" text as the CLI takes it (--listen, --target), split into host and port.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dsekp::linkemu {

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

/// Splits "127.0.0.1:1883", "localhost:0" or "[::1]:1883" (brackets for IPv6). Port 0 is
/// accepted only when `allow_port_zero` (a listener's "any free port"). False with `error`
/// set (naming the text) when the form or the port is wrong; the host is not resolved here.
[[nodiscard]] bool parse_host_port(std::string_view text, bool allow_port_zero, HostPort& out,
                                   std::string& error);

}  // namespace dsekp::linkemu
