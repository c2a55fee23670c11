// Payload size histogram and overhead (see payload.hpp).
#include "payload.hpp"

#include <cmath>

namespace dsekp::analyze {

void PayloadHistogram::merge(const PayloadHistogram& other) {
  for (const auto& [size, count] : other.counts_) counts_[size] += count;
}

PayloadSummary PayloadHistogram::summary() const {
  PayloadSummary s;
  for (const auto& [size, count] : counts_) {
    s.n += count;
    s.total_bytes += size * count;
  }
  if (s.n == 0) return s;
  const double mean = static_cast<double>(s.total_bytes) / static_cast<double>(s.n);
  s.mean = mean;
  s.min = counts_.begin()->first;
  s.max = counts_.rbegin()->first;
  if (s.n >= 2) {
    // Two-pass over the distinct sizes: exact enough and no cancellation from sum of squares.
    double squares = 0;
    for (const auto& [size, count] : counts_) {
      const double d = static_cast<double>(size) - mean;
      squares += d * d * static_cast<double>(count);
    }
    s.sd = std::sqrt(squares / static_cast<double>(s.n - 1));
  }
  return s;
}

std::optional<double> payload_overhead_pct(const PayloadSummary& psk, const PayloadSummary& dsekp) {
  if (!psk.mean || !dsekp.mean || *psk.mean <= 0) return std::nullopt;
  return (*dsekp.mean - *psk.mean) / *psk.mean * 100.0;
}

}  // namespace dsekp::analyze
