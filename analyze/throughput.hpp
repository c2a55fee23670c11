// Throughput from the edge's receive times: packets per 1 s bin (bin_1s = floor(recvts_ms / 1000),
// docs/LOGS.md), summarised two ways because the paper's figures only fit one of them:
//   - over non-empty bins (mean packets and bits per bin that received anything): the paper's
//     "1.00 pps" at one packet every 2 s and its bps (= mean payload x 8 x that rate) are this;
//   - over active time (packets and bits divided by the seconds from the first to the last bin of
//     each run, empty bins included): the rate an operator would call the packet rate.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace dsekp::analyze {

struct SecondCount {
  std::int64_t second = 0;  // floor(recvts_ms / 1000)
  std::uint64_t packets = 0;
  friend bool operator==(const SecondCount&, const SecondCount&) = default;
};

/// Counts packets per receive second of one log, keeping one entry per run of rows in the same
/// second (logs are nearly in time order). Rows out of order add entries; they are sorted and
/// merged whenever they outgrow the merged part, so memory follows the number of distinct
/// seconds, not of rows.
class ReceiveBins {
 public:
  void add(double recvts_ms);
  std::vector<SecondCount> finish();

 private:
  void merge();
  std::vector<SecondCount> runs_;
  std::size_t merged_size_ = 0;
};

struct ThroughputSummary {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t occupied_bins = 0;   // 1 s bins with at least one packet
  std::uint64_t active_seconds = 0;  // sum over runs of (last bin - first bin + 1)
  std::uint64_t max_packets_in_bin = 0;
  std::optional<double> pps_nonempty_bins;  // packets / occupied_bins (the paper's pps)
  std::optional<double> bps_nonempty_bins;  // 8 x bytes / occupied_bins (the paper's bps)
  std::optional<double> pps_active;         // packets / active_seconds
  std::optional<double> bps_active;         // 8 x bytes / active_seconds
};

/// `runs`: each run's finished bins (one entry per server log); `bytes`: payload bytes received.
ThroughputSummary summarize_throughput(std::span<const std::vector<SecondCount>> runs,
                                       std::uint64_t bytes);

struct RatePoint {
  double t_s = 0;  // middle of the window, seconds since the first packet (runs end to end)
  double pps = 0;  // packets in the window / window length
};

struct RateSeries {
  std::int64_t window_s = 1;
  std::vector<RatePoint> points;
};

/// Packet rate over time for the figure: windows of a whole number of seconds, the smallest that
/// gives at most `max_points` points; runs are placed end to end.
RateSeries rate_series(std::span<const std::vector<SecondCount>> runs, std::size_t max_points);

}  // namespace dsekp::analyze
