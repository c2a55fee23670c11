// Sliding-window replay protection (see replay_window.hpp). Bit i of the bitmap stands for seq
// top-1-i; sliding right by k seqs is a k-bit left shift of the multi-word bitmap.
#include "dsekp/replay_window.hpp"

namespace dsekp {

ReplayWindow::ReplayWindow(std::uint32_t size) noexcept
    : size_(size == 0 ? 1 : (size > kMaxSize ? kMaxSize : size)) {}

Error ReplayWindow::check(std::uint32_t seq) const noexcept {
  if (seq >= top_) return Error::ok;  // new highest (also the first frame ever, top_ == 0)
  const std::uint64_t distance = top_ - 1 - seq;
  if (distance >= size_) return Error::too_old;
  // distance < size_ <= kMaxSize here, so the word index fits a 32-bit size_t too.
  const bool seen = (bits_[static_cast<std::size_t>(distance / 64)] >> (distance % 64)) & 1u;
  return seen ? Error::replay : Error::ok;
}

Error ReplayWindow::accept(std::uint32_t seq) noexcept {
  if (Error e = check(seq); e != Error::ok) return e;
  if (seq >= top_) {
    shift_left(static_cast<std::uint64_t>(seq) + 1 - top_);
    top_ = static_cast<std::uint64_t>(seq) + 1;
    bits_[0] |= 1u;
  } else {
    const std::uint64_t distance = top_ - 1 - seq;  // < size_: check() passed
    bits_[static_cast<std::size_t>(distance / 64)] |= std::uint64_t{1} << (distance % 64);
  }
  return Error::ok;
}

void ReplayWindow::restore(std::uint64_t top,
                           const std::array<std::uint64_t, kMaxSize / 64>& bits) noexcept {
  top_ = top;
  bits_ = bits;
}

void ReplayWindow::shift_left(std::uint64_t by) noexcept {
  // Only the words that hold the window's `size_` bits are kept up to date; the rest stay zero.
  const std::size_t words = (size_ + 63) / 64;
  if (by >= std::uint64_t{words} * 64) {
    bits_.fill(0);
    return;
  }
  const std::size_t word_shift = static_cast<std::size_t>(by / 64);
  const unsigned bit_shift = static_cast<unsigned>(by % 64);
  for (std::size_t i = words; i-- > 0;) {
    std::uint64_t v = 0;
    if (i >= word_shift) {
      v = bits_[i - word_shift] << bit_shift;
      if (bit_shift != 0 && i >= word_shift + 1) v |= bits_[i - word_shift - 1] >> (64 - bit_shift);
    }
    bits_[i] = v;
  }
}

}  // namespace dsekp
