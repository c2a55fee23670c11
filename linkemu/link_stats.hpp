// What the link emulator has done so far: a snapshot taken by LinkEmulator::stats(), and its
// JSON form (what `dsekp link --stats-json` writes).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace dsekp::linkemu {

/// Index of a direction in the per-direction arrays below.
enum LinkDirection : int {
  upstream = 0,    ///< accepted client -> target (device -> broker)
  downstream = 1,  ///< target -> accepted client (broker -> device)
};

/// The time chunks were held by the emulator (from their read to the start of their write):
/// the applied delay, including jitter, rate, stalls, order and a blocked receiver.
struct HeldTimeStats {
  /// Upper bounds (microseconds) of the histogram buckets; the last bucket has no bound.
  static constexpr std::array<std::uint64_t, 12> kBucketUpperUs{
      100, 1000, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000};
  std::array<std::uint64_t, kBucketUpperUs.size() + 1> buckets{};  ///< chunk counts
  std::uint64_t chunks = 0;
  std::uint64_t sum_us = 0;
  std::uint64_t min_us = 0;  ///< 0 when no chunk yet
  std::uint64_t max_us = 0;
  [[nodiscard]] double mean_us() const noexcept {
    return chunks == 0 ? 0.0 : static_cast<double>(sum_us) / static_cast<double>(chunks);
  }
};

/// Counters are updated by the loop thread as it works: a snapshot taken while it runs can lag
/// what the peers have already seen by a moment (bytes are counted after their write); after
/// LinkEmulator::stop() they are final.
struct LinkStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t connections_active = 0;       ///< accepted and not yet closed
  std::uint64_t target_connect_failures = 0;  ///< the target refused or failed: client closed
  std::uint64_t accept_failures = 0;     ///< e.g. out of file descriptors (accepting pauses 100 ms)
  std::uint64_t stalls = 0;              ///< stalls started
  std::uint64_t drops = 0;               ///< connections cut by `drop`
  std::uint64_t cuts = 0;                ///< connections cut by LinkEmulator::cut_connections
  std::array<std::uint64_t, 2> bytes{};  ///< relayed (written to the destination)
  std::array<std::uint64_t, 2> chunks{};           ///< read from the source
  std::array<std::uint64_t, 2> chunks_delayed{};   ///< queued instead of written at once
  std::array<std::uint64_t, 2> bytes_discarded{};  ///< read but never relayed (drops, blackhole)
  std::uint64_t queued_bytes = 0;                  ///< held now, all connections and directions
  /// The most bytes one direction of one connection ever held (bounded by the spec's queue).
  std::uint64_t peak_direction_queued_bytes = 0;
  HeldTimeStats held;
};

/// The stats as a JSON object (snake_case keys as in LinkStats; held time in microseconds with
/// the histogram as [{"le_us": bound or null, "chunks": n}]). `spec` is added as "link".
[[nodiscard]] std::string link_stats_json(const LinkStats& stats, const std::string& spec);

}  // namespace dsekp::linkemu
