// A bounds-checked input cursor for the compact decoder (internal).
//
// Each take fails (returns false, consumes nothing) if fewer bytes remain than asked for; the
// decoder turns that into Error::truncated.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dsekp/bytes.hpp"

namespace dsekp::codec_detail {

class Reader {
 public:
  explicit Reader(ByteView in) noexcept : in_(in) {}

  [[nodiscard]] std::size_t remaining() const noexcept { return in_.size() - pos_; }

  [[nodiscard]] bool u8(std::uint8_t& v) noexcept {
    if (remaining() < 1) return false;
    v = in_[pos_++];
    return true;
  }
  [[nodiscard]] bool be16(std::uint16_t& v) noexcept {
    if (remaining() < 2) return false;
    v = load_be16(in_.data() + pos_);
    pos_ += 2;
    return true;
  }
  [[nodiscard]] bool be32(std::uint32_t& v) noexcept {
    if (remaining() < 4) return false;
    v = load_be32(in_.data() + pos_);
    pos_ += 4;
    return true;
  }
  [[nodiscard]] bool be64(std::uint64_t& v) noexcept {
    if (remaining() < 8) return false;
    v = load_be64(in_.data() + pos_);
    pos_ += 8;
    return true;
  }
  /// A view of the next `n` bytes (valid as long as the input is).
  [[nodiscard]] bool take(std::size_t n, ByteView& out) noexcept {
    if (remaining() < n) return false;
    out = in_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

 private:
  ByteView in_;
  std::size_t pos_ = 0;
};

}  // namespace dsekp::codec_detail
