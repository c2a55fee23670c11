// A bounds-checked output cursor used by both encoders (internal).
//
// Every put is checked against the caller's buffer; after the first overflow the writer stops
// writing and ok() stays false, so an encoder can emit a whole frame and test once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base64.hpp"
#include "dsekp/bytes.hpp"

namespace dsekp::codec_detail {

class Writer {
 public:
  explicit Writer(MutableByteView out) noexcept : out_(out) {}

  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] std::size_t size() const noexcept { return pos_; }

  void u8(std::uint8_t v) noexcept {
    if (reserve(1)) out_[pos_++] = v;
  }
  void be16(std::uint16_t v) noexcept {
    if (!reserve(2)) return;
    store_be16(out_.data() + pos_, v);
    pos_ += 2;
  }
  void be32(std::uint32_t v) noexcept {
    if (!reserve(4)) return;
    store_be32(out_.data() + pos_, v);
    pos_ += 4;
  }
  void be64(std::uint64_t v) noexcept {
    if (!reserve(8)) return;
    store_be64(out_.data() + pos_, v);
    pos_ += 8;
  }
  void bytes(ByteView b) noexcept {
    if (!reserve(b.size())) return;
    for (const std::uint8_t x : b) out_[pos_++] = x;
  }
  void text(std::string_view s) noexcept {
    if (!reserve(s.size())) return;
    for (const char c : s) out_[pos_++] = static_cast<std::uint8_t>(c);
  }
  /// Canonical unsigned decimal: no sign, no leading zeros, "0" for zero.
  void decimal(std::uint64_t v) noexcept {
    char digits[20];  // 2^64 - 1 has 20 digits
    std::size_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10U);
      v /= 10U;
    } while (v != 0);
    if (!reserve(n)) return;
    while (n > 0) out_[pos_++] = static_cast<std::uint8_t>(digits[--n]);
  }
  /// Padded base64 of `b`, without quotes.
  void base64_text(ByteView b) noexcept {
    if (!reserve(base64::encoded_size(b.size()))) return;
    std::size_t n = 0;
    const std::span<char> dst(reinterpret_cast<char*>(out_.data() + pos_), out_.size() - pos_);
    if (base64::encode(b, dst, n) != Error::ok) {
      ok_ = false;
      return;
    }
    pos_ += n;
  }

 private:
  bool reserve(std::size_t n) noexcept {
    if (!ok_ || n > out_.size() - pos_) {
      ok_ = false;
      return false;
    }
    return true;
  }

  MutableByteView out_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace dsekp::codec_detail
