// Text from the network (MQTT topics, device ids, error details) made safe to put in a log line:
// a topic holding a newline could otherwise forge a whole log line of its own.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dsekp::edge::logging {

/// `text` with every control byte (0x00-0x1F, 0x7F) and backslash written as `\xNN` / `\\`,
/// cut to its first `max_bytes` bytes (a cut is marked with "..."). Other bytes, UTF-8 included,
/// pass unchanged.
[[nodiscard]] std::string printable(std::string_view text, std::size_t max_bytes = 128);

}  // namespace dsekp::edge::logging
