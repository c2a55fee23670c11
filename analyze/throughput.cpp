// Receive-second bins and throughput summaries (see throughput.hpp).
#include "throughput.hpp"

#include <algorithm>
#include <cmath>

namespace dsekp::analyze {

void ReceiveBins::add(double recvts_ms) {
  const auto second = static_cast<std::int64_t>(std::floor(recvts_ms / 1000.0));
  if (!runs_.empty() && runs_.back().second == second) {
    ++runs_.back().packets;
    return;
  }
  runs_.push_back({second, 1});
  if (runs_.size() >= 2 * merged_size_ + 4096) merge();
}

void ReceiveBins::merge() {
  std::stable_sort(runs_.begin(), runs_.end(),
                   [](const SecondCount& a, const SecondCount& b) { return a.second < b.second; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    if (out > 0 && runs_[out - 1].second == runs_[i].second) {
      runs_[out - 1].packets += runs_[i].packets;
    } else {
      runs_[out++] = runs_[i];
    }
  }
  runs_.resize(out);
  merged_size_ = out;
}

std::vector<SecondCount> ReceiveBins::finish() {
  merge();
  runs_.shrink_to_fit();
  merged_size_ = 0;
  return std::move(runs_);
}

ThroughputSummary summarize_throughput(std::span<const std::vector<SecondCount>> runs,
                                       std::uint64_t bytes) {
  ThroughputSummary s;
  s.bytes = bytes;
  for (const auto& bins : runs) {
    if (bins.empty()) continue;
    s.occupied_bins += bins.size();
    s.active_seconds += static_cast<std::uint64_t>(bins.back().second - bins.front().second + 1);
    for (const auto& bin : bins) {
      s.packets += bin.packets;
      s.max_packets_in_bin = std::max(s.max_packets_in_bin, bin.packets);
    }
  }
  const double bits = 8.0 * static_cast<double>(bytes);
  if (s.occupied_bins > 0) {
    s.pps_nonempty_bins = static_cast<double>(s.packets) / static_cast<double>(s.occupied_bins);
    s.bps_nonempty_bins = bits / static_cast<double>(s.occupied_bins);
  }
  if (s.active_seconds > 0) {
    s.pps_active = static_cast<double>(s.packets) / static_cast<double>(s.active_seconds);
    s.bps_active = bits / static_cast<double>(s.active_seconds);
  }
  return s;
}

RateSeries rate_series(std::span<const std::vector<SecondCount>> runs, std::size_t max_points) {
  RateSeries series;
  std::int64_t total = 0;
  for (const auto& bins : runs)
    if (!bins.empty()) total += bins.back().second - bins.front().second + 1;
  if (total == 0 || max_points == 0) return series;
  const auto limit = static_cast<std::int64_t>(max_points);
  series.window_s = std::max<std::int64_t>(1, (total + limit - 1) / limit);
  const std::int64_t w = series.window_s;
  std::int64_t offset = 0;
  for (const auto& bins : runs) {
    if (bins.empty()) continue;
    const std::int64_t first = bins.front().second;
    const std::int64_t span = bins.back().second - first + 1;
    const std::int64_t windows = (span + w - 1) / w;
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(windows), 0);
    for (const auto& bin : bins)
      counts[static_cast<std::size_t>((bin.second - first) / w)] += bin.packets;
    for (std::int64_t k = 0; k < windows; ++k) {
      // The last window of a run may be shorter than w; divide by its real length.
      const std::int64_t length = std::min(w, span - k * w);
      series.points.push_back(
          {static_cast<double>(offset + k * w) + static_cast<double>(length) / 2.0,
           static_cast<double>(counts[static_cast<std::size_t>(k)]) / static_cast<double>(length)});
    }
    offset += span;
  }
  return series;
}

}  // namespace dsekp::analyze
