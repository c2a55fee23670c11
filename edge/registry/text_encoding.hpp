// Text spellings of bytes for the registry's outputs: lowercase hex for provisioning material
// (what firmware and people copy), padded standard base64 for the Mosquitto password file (the
// spelling mosquitto_passwd writes and the broker decodes); and the bytes of a text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dsekp/bytes.hpp"

namespace dsekp::edge {

/// Lowercase hex, two characters per byte, no separators.
[[nodiscard]] std::string to_hex(ByteView bytes);

/// Standard base64 with padding (RFC 4648 section 4), no line breaks.
[[nodiscard]] std::string to_base64(ByteView bytes);

/// The bytes of a text (a JSON document, a label, a message payload) as a view.
[[nodiscard]] inline ByteView bytes_of(std::string_view text) noexcept {
  return ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

}  // namespace dsekp::edge
