// Text spellings of bytes for the registry's outputs: lowercase hex for provisioning material
// (what firmware and people copy), padded standard base64 for the Mosquitto password file (the
// spelling mosquitto_passwd writes and the broker decodes).
#pragma once

#include <string>

#include "dsekp/bytes.hpp"

namespace dsekp::edge {

/// Lowercase hex, two characters per byte, no separators.
[[nodiscard]] std::string to_hex(ByteView bytes);

/// Standard base64 with padding (RFC 4648 section 4), no line breaks.
[[nodiscard]] std::string to_base64(ByteView bytes);

}  // namespace dsekp::edge
