// Token bucket (see token_bucket.hpp).
#include "dsekp/token_bucket.hpp"

namespace dsekp {

bool TokenBucket::try_take(const TokenBucketConfig& config, std::uint64_t now_ms) noexcept {
  if (config.capacity == 0 || config.refill_interval_ms == 0) return true;  // no limit configured
  if (!initialised_) {
    initialised_ = true;
    tokens_ = config.capacity;
    last_refill_ms_ = now_ms;
  }
  // A restored (or re-configured) bucket never holds more than the current burst size.
  if (tokens_ > config.capacity) tokens_ = config.capacity;
  // A clock that stepped back (NTP, a restored RTC) would otherwise stop the refill until it
  // passed the old time again, silencing the device for as long as the step: count time again
  // from here. The step grants nothing; the refill goes on at its rate.
  if (now_ms < last_refill_ms_) last_refill_ms_ = now_ms;
  if (now_ms > last_refill_ms_) {
    const std::uint64_t earned = (now_ms - last_refill_ms_) / config.refill_interval_ms;
    if (earned > 0) {
      const std::uint64_t total = tokens_ + earned;
      tokens_ = total > config.capacity ? config.capacity : static_cast<std::uint32_t>(total);
      // Keep the remainder so partial intervals are not lost.
      last_refill_ms_ += earned * config.refill_interval_ms;
    }
  }
  if (tokens_ == 0) return false;
  --tokens_;
  return true;
}

}  // namespace dsekp
