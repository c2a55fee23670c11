// Microsecond latency join and statistics (see latency_us.hpp).
#include "latency_us.hpp"

#include <algorithm>

#include "analysis.hpp"

namespace dsekp::analyze {

void join_micro_latencies(std::vector<MicroStamp>& client, std::vector<MicroStamp>& server,
                          MicroLatencyResult& out) {
  const auto by_key = [](const MicroStamp& a, const MicroStamp& b) { return a.key < b.key; };
  std::sort(client.begin(), client.end(), by_key);
  std::sort(server.begin(), server.end(), by_key);
  // Sort-merge as in reliability.cpp: the client range of each server key is found once.
  std::size_t c = 0;
  for (const MicroStamp& row : server) {
    while (c < client.size() && client[c].key < row.key) ++c;
    std::size_t end = c;
    while (end < client.size() && client[end].key == row.key) ++end;
    if (end == c) {
      ++out.no_client_row;
    } else if (end - c > 1) {
      // The client log sent this packet twice (a restarted seq): no way to tell which send it is.
      ++out.ambiguous;
    } else if (client[c].us == kNoMicros) {
      ++out.bad_sendts_us;
    } else {
      // Both values are at most 2^53 (log_files.cpp), so the difference is exact in a double.
      const auto latency =
          static_cast<std::int64_t>(row.us) - static_cast<std::int64_t>(client[c].us);
      if (latency < 0) ++out.negative;
      out.sorted.push_back(static_cast<double>(latency));
    }
  }
}

void finish_micro_latencies(MicroLatencyResult& out, double outlier_ms) {
  out.n_before_outliers = out.sorted.size();
  // The ms tables' rule (paper, section 4.6), at the same threshold.
  out.outliers_excluded = apply_outlier_rule(out.sorted, outlier_ms * 1000.0);
  std::sort(out.sorted.begin(), out.sorted.end());
  out.stats = describe_sorted(out.sorted);
}

MicroComparison compare_micro_latencies(const MicroLatencyResult& psk,
                                        const MicroLatencyResult& dsekp) {
  MicroComparison c;
  const auto& a = psk.stats;
  const auto& b = dsekp.stats;
  if (a.mean && b.mean) c.mean_difference_us = *b.mean - *a.mean;
  if (a.median && b.median) c.median_difference_us = *b.median - *a.median;
  c.t_test = welch_t_test(psk.sorted, dsekp.sorted);
  c.rank_sum = wilcoxon_rank_sum(psk.sorted, dsekp.sorted);
  return c;
}

}  // namespace dsekp::analyze
