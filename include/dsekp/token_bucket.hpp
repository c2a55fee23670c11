// A token bucket for rate limiting (per-device INIT budget). Pure: time is passed in.
#pragma once

#include <cstdint>

namespace dsekp {

struct TokenBucketConfig {
  std::uint32_t capacity = 8;                 // burst size; 0 = unlimited
  std::uint32_t refill_interval_ms = 30'000;  // one token per interval; 0 = unlimited too
};

/// Everything a TokenBucket holds, for persistence (the edge's store keeps each device's INIT
/// budget across restarts, so a restart does not hand every device a full bucket).
struct TokenBucketState {
  bool initialised = false;  // false: never used yet (it starts full on first use)
  std::uint32_t tokens = 0;
  std::uint64_t last_refill_ms = 0;
  friend bool operator==(const TokenBucketState&, const TokenBucketState&) = default;
};

class TokenBucket {
 public:
  /// Takes one token if available at `now_ms`; false means rate limited. The bucket starts full.
  [[nodiscard]] bool try_take(const TokenBucketConfig& config, std::uint64_t now_ms) noexcept;
  [[nodiscard]] std::uint32_t tokens() const noexcept { return tokens_; }
  [[nodiscard]] TokenBucketState state() const noexcept {
    return {initialised_, tokens_, last_refill_ms_};
  }
  /// Restores a persisted state. Tokens above the configured capacity are cut back on the next
  /// try_take, so a corrupted count cannot grant more than one burst.
  void restore(const TokenBucketState& s) noexcept {
    initialised_ = s.initialised;
    tokens_ = s.initialised ? s.tokens : 0;
    last_refill_ms_ = s.initialised ? s.last_refill_ms : 0;
  }

 private:
  std::uint64_t last_refill_ms_ = 0;
  std::uint32_t tokens_ = 0;
  bool initialised_ = false;
};

}  // namespace dsekp
