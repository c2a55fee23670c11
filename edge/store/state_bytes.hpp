// Big-endian append writer and bounds-checked reader for the device-state encoding.
//
// Internal to edge/store. The reader never reads past its input: every get_* returns false once
// the input runs out, so a truncated blob surfaces as a named error instead of an over-read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dsekp/bytes.hpp"

namespace dsekp::edge::detail {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) noexcept : out_(out) {}

  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { put<2>(v, store_be16); }
  void u32(std::uint32_t v) { put<4>(v, store_be32); }
  void u64(std::uint64_t v) { put<8>(v, store_be64); }
  void bytes(ByteView v) { out_.insert(out_.end(), v.begin(), v.end()); }

 private:
  template <std::size_t N, typename T, typename Store>
  void put(T v, Store store) {
    std::uint8_t be[N];
    store(be, v);
    out_.insert(out_.end(), be, be + N);
  }
  std::vector<std::uint8_t>& out_;
};

class ByteReader {
 public:
  explicit ByteReader(ByteView in) noexcept : in_(in) {}

  [[nodiscard]] bool u8(std::uint8_t& v) noexcept {
    if (!has(1)) return false;
    v = in_[pos_++];
    return true;
  }
  [[nodiscard]] bool u16(std::uint16_t& v) noexcept { return get(v, 2, load_be16); }
  [[nodiscard]] bool u32(std::uint32_t& v) noexcept { return get(v, 4, load_be32); }
  [[nodiscard]] bool u64(std::uint64_t& v) noexcept { return get(v, 8, load_be64); }
  /// The next `n` bytes as a view into the input (not copied).
  [[nodiscard]] bool bytes(std::size_t n, ByteView& v) noexcept {
    if (!has(n)) return false;
    v = in_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  [[nodiscard]] bool at_end() const noexcept { return pos_ == in_.size(); }

 private:
  [[nodiscard]] bool has(std::size_t n) const noexcept { return in_.size() - pos_ >= n; }
  template <typename T, typename Load>
  [[nodiscard]] bool get(T& v, std::size_t n, Load load) noexcept {
    if (!has(n)) return false;
    v = load(in_.data() + pos_);
    pos_ += n;
    return true;
  }
  ByteView in_;
  std::size_t pos_ = 0;
};

}  // namespace dsekp::edge::detail
