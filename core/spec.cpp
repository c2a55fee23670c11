// Validation of the protocol's strong value types declared in dsekp/spec.hpp: DevId and EdgeSalt.
#include "dsekp/spec.hpp"

#include <array>
#include <cstring>

namespace dsekp {
namespace {

// The dev_id alphabet is deliberately small: it appears in MQTT topic names (no '/', '+', '#'),
// in JSON strings without any escaping, and in logs.
constexpr bool is_dev_id_char(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// The same rule as a table: every received frame's dev_id is checked, one lookup per byte.
constexpr std::array<bool, 256> kDevIdChars = [] {
  std::array<bool, 256> table{};
  for (std::size_t i = 0; i < table.size(); ++i) {
    table[i] = is_dev_id_char(static_cast<char>(static_cast<unsigned char>(i)));
  }
  return table;
}();

}  // namespace

bool is_valid_dev_id(std::string_view text) noexcept {
  if (text.empty() || text.size() > kDevIdMaxSize) return false;
  for (const char c : text) {
    if (!kDevIdChars[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

Error DevId::assign(std::string_view text) noexcept {
  // Validate before touching the stored value, so a failed assign leaves the old id intact.
  if (!is_valid_dev_id(text)) return Error::bad_dev_id;
  chars_.fill('\0');  // whole-array: a fixed-size fill compiles to a few stores
  std::memcpy(chars_.data(), text.data(), text.size());
  size_ = text.size();
  return Error::ok;
}

Error EdgeSalt::assign(ByteView bytes) noexcept {
  if (bytes.size() < kEdgeSaltMinSize || bytes.size() > kEdgeSaltMaxSize) {
    return Error::invalid_argument;
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes_[i] = bytes[i];
  for (std::size_t i = bytes.size(); i < bytes_.size(); ++i) bytes_[i] = 0;
  size_ = bytes.size();
  return Error::ok;
}

}  // namespace dsekp
