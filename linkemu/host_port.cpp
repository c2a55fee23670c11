// HOST:PORT splitting (see host_port.hpp).
#include "linkemu/host_port.hpp"

#include <charconv>

namespace dsekp::linkemu {

bool parse_host_port(std::string_view text, bool allow_port_zero, HostPort& out,
                     std::string& error) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    error = quoted + " is not HOST:PORT";
    return false;
  }
  std::string_view host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') {
      error = quoted + " is not HOST:PORT ([v6-address]:PORT for IPv6)";
      return false;
    }
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    error = quoted + ": write an IPv6 address in brackets, e.g. [::1]:1883";
    return false;
  }
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [ptr, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port > 65535 ||
      (port == 0 && !allow_port_zero)) {
    error = quoted + ": port must be " + (allow_port_zero ? "0.." : "1..") + "65535";
    return false;
  }
  out.host = std::string(host);
  out.port = static_cast<std::uint16_t>(port);
  return true;
}

}  // namespace dsekp::linkemu
