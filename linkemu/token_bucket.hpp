// A token bucket on bytes, as arithmetic on time points: it says when a chunk offered at some
// time has passed, without sleeping. The link emulator keeps one per direction.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace dsekp::linkemu {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  /// `bits_per_s` 0 = unlimited. `burst_bytes` is the depth (the bucket starts full); 0 makes
  /// it a pure serializer: each byte takes 8/bits_per_s seconds, one after the other.
  TokenBucket(std::uint64_t bits_per_s, std::uint64_t burst_bytes);

  /// Changes rate and depth for later chunks (tokens above the new depth are dropped).
  void configure(std::uint64_t bits_per_s, std::uint64_t burst_bytes);

  /// When a chunk of `bytes` offered at `ready` has passed the bucket. Chunks pass in the order
  /// of the calls: a chunk never passes before the previous one. A chunk larger than the depth
  /// passes once the tokens it lacks have accumulated (the bucket then starts empty).
  [[nodiscard]] Clock::time_point pass(Clock::time_point ready, std::size_t bytes);

 private:
  double bytes_per_ns_ = 0;  // 0 = unlimited
  double depth_ = 0;
  double tokens_ = 0;
  bool started_ = false;
  Clock::time_point last_{};  // when `tokens_` was true
};

}  // namespace dsekp::linkemu
