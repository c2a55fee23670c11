// A token bucket for rate limiting (per-device INIT budget). Pure: time is passed in.
#pragma once

#include <cstdint>

namespace dsekp {

struct TokenBucketConfig {
  std::uint32_t capacity = 8;                 // burst size; 0 = unlimited
  std::uint32_t refill_interval_ms = 30'000;  // one token per interval; 0 = unlimited too
};

class TokenBucket {
 public:
  /// Takes one token if available at `now_ms`; false means rate limited. The bucket starts full.
  [[nodiscard]] bool try_take(const TokenBucketConfig& config, std::uint64_t now_ms) noexcept;
  [[nodiscard]] std::uint32_t tokens() const noexcept { return tokens_; }

 private:
  std::uint64_t last_refill_ms_ = 0;
  std::uint32_t tokens_ = 0;
  bool initialised_ = false;
};

}  // namespace dsekp
