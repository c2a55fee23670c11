// Sliding-window replay protection for one session and direction (RFC 6479 / OSCORE 7.4 style).
//
// The window remembers the highest accepted seq and which of the `size` seqs at and below it were
// accepted. `check` never changes state; `accept` records a seq. Callers authenticate the frame
// first and only then call `accept`, so a forged frame can never move the window.
#pragma once

#include <array>
#include <cstdint>

#include "dsekp/error.hpp"

namespace dsekp {

class ReplayWindow {
 public:
  static constexpr std::uint32_t kDefaultSize = 64;
  static constexpr std::uint32_t kMaxSize = 1024;

  ReplayWindow() noexcept : ReplayWindow(kDefaultSize) {}
  /// `size` in [1, kMaxSize]; out-of-range values are clamped into it.
  explicit ReplayWindow(std::uint32_t size) noexcept;

  /// ok if `seq` would be accepted; replay if already accepted; too_old if left of the window.
  Error check(std::uint32_t seq) const noexcept;
  /// check(), and on ok records `seq` (sliding the window right if seq is the new highest).
  Error accept(std::uint32_t seq) noexcept;

  [[nodiscard]] std::uint32_t size() const noexcept { return size_; }
  /// Highest accepted seq + 1, or 0 if nothing was accepted yet.
  [[nodiscard]] std::uint64_t top() const noexcept { return top_; }
  /// Bit i set <=> seq (top - 1 - i) was accepted. Exposed for persistence.
  [[nodiscard]] const std::array<std::uint64_t, kMaxSize / 64>& bitmap() const noexcept {
    return bits_;
  }
  /// Restores persisted state (as returned by top() and bitmap()).
  void restore(std::uint64_t top, const std::array<std::uint64_t, kMaxSize / 64>& bits) noexcept;

 private:
  void shift_left(std::uint64_t by) noexcept;
  std::array<std::uint64_t, kMaxSize / 64> bits_{};
  std::uint64_t top_ = 0;
  std::uint32_t size_;
};

}  // namespace dsekp
