// Payload sizes (bytes of the MQTT payload) as a histogram: the sizes take few distinct values,
// so a size -> count map is exact and far smaller than one number per row.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace dsekp::analyze {

struct PayloadSummary {
  std::uint64_t n = 0;
  std::uint64_t total_bytes = 0;
  std::optional<double> mean;
  std::optional<double> sd;  // sample SD (n - 1)
  std::optional<std::uint64_t> min;
  std::optional<std::uint64_t> max;
};

class PayloadHistogram {
 public:
  void add(std::uint64_t size) { ++counts_[size]; }
  void merge(const PayloadHistogram& other);
  const std::map<std::uint64_t, std::uint64_t>& counts() const { return counts_; }
  PayloadSummary summary() const;

 private:
  std::map<std::uint64_t, std::uint64_t> counts_;
};

/// (mean_dsekp - mean_psk) / mean_psk * 100; the paper's Table 7 "payload overhead (%)".
std::optional<double> payload_overhead_pct(const PayloadSummary& psk, const PayloadSummary& dsekp);

}  // namespace dsekp::analyze
