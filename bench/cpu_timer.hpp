// Thread CPU time, the unit of every `dsekp bench` figure (the same clock the TLS benchmark uses,
// so ratios compare like with like).
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dsekp::bench {

inline std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

/// Median of a non-empty sample (the upper median for even sizes).
inline double median_of(std::vector<double> values) {
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

}  // namespace dsekp::bench
