// Token bucket arithmetic (see token_bucket.hpp).
#include "linkemu/token_bucket.hpp"

#include <algorithm>
#include <cmath>

namespace dsekp::linkemu {

TokenBucket::TokenBucket(std::uint64_t bits_per_s, std::uint64_t burst_bytes) {
  configure(bits_per_s, burst_bytes);
  tokens_ = depth_;
}

void TokenBucket::configure(std::uint64_t bits_per_s, std::uint64_t burst_bytes) {
  bytes_per_ns_ = static_cast<double>(bits_per_s) / 8e9;
  depth_ = static_cast<double>(burst_bytes);
  tokens_ = std::min(tokens_, depth_);
}

TokenBucket::Clock::time_point TokenBucket::pass(Clock::time_point ready, std::size_t bytes) {
  if (bytes_per_ns_ <= 0) return ready;
  Clock::time_point t = ready;
  if (started_) {
    t = std::max(ready, last_);
    const double elapsed_ns = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t - last_).count());
    tokens_ = std::min(depth_, tokens_ + elapsed_ns * bytes_per_ns_);
  }
  started_ = true;
  const double need = static_cast<double>(bytes);
  if (tokens_ >= need) {
    tokens_ -= need;
    last_ = t;
    return t;
  }
  const double wait_ns = std::ceil((need - tokens_) / bytes_per_ns_);
  tokens_ = 0;
  last_ = t + std::chrono::nanoseconds(static_cast<std::int64_t>(wait_ns));
  return last_;
}

}  // namespace dsekp::linkemu
