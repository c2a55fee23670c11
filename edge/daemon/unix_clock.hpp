// The wall clock as the edge's logs and rows record it: Unix microseconds (recvts_us) and
// milliseconds (recvts_ms, retention, downlink expiry).
#pragma once

#include <chrono>
#include <cstdint>

namespace dsekp::edge::daemon {

[[nodiscard]] inline std::uint64_t unix_us_now() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

[[nodiscard]] inline std::uint64_t unix_ms_now() noexcept {
  return unix_us_now() / 1000;
}

}  // namespace dsekp::edge::daemon
