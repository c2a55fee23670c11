// printable (see printable.hpp).
#include "edge/logging/printable.hpp"

namespace dsekp::edge::logging {

std::string printable(std::string_view text, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  const bool cut = text.size() > max_bytes;
  if (cut) text = text.substr(0, max_bytes);
  std::string out;
  out.reserve(text.size() + (cut ? 3 : 0));
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += c;
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace dsekp::edge::logging
