// Internal: the counters behind LinkStats. The loop thread writes them (relaxed atomics: each is
// a monotonic count or a gauge, none orders other memory) and stats() reads them from any thread.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "linkemu/link_stats.hpp"

namespace dsekp::linkemu {

struct LinkCounters {
  using Counter = std::atomic<std::uint64_t>;
  Counter connections_accepted{0};
  Counter connections_closed{0};
  Counter target_connect_failures{0};
  Counter accept_failures{0};
  Counter stalls{0};
  Counter drops{0};
  Counter cuts{0};
  std::array<Counter, 2> bytes{};
  std::array<Counter, 2> chunks{};
  std::array<Counter, 2> chunks_delayed{};
  std::array<Counter, 2> bytes_discarded{};
  Counter queued_bytes{0};
  Counter peak_direction_queued_bytes{0};
  std::array<Counter, HeldTimeStats::kBucketUpperUs.size() + 1> held_buckets{};
  Counter held_chunks{0};
  Counter held_sum_us{0};
  Counter held_min_us{UINT64_MAX};
  Counter held_max_us{0};

  static void add(Counter& c, std::uint64_t n = 1) noexcept {
    c.fetch_add(n, std::memory_order_relaxed);
  }
  static void raise_to(Counter& c, std::uint64_t v) noexcept {
    // Only the loop thread writes, so load + store cannot lose an update.
    if (v > c.load(std::memory_order_relaxed)) c.store(v, std::memory_order_relaxed);
  }

  void record_held(std::chrono::nanoseconds held) noexcept {
    const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::microseconds>(held).count()));
    std::size_t bucket = 0;
    while (bucket < HeldTimeStats::kBucketUpperUs.size() &&
           us > HeldTimeStats::kBucketUpperUs[bucket])
      ++bucket;
    add(held_buckets[bucket]);
    add(held_chunks);
    add(held_sum_us, us);
    if (us < held_min_us.load(std::memory_order_relaxed))
      held_min_us.store(us, std::memory_order_relaxed);
    raise_to(held_max_us, us);
  }

  [[nodiscard]] LinkStats snapshot() const noexcept {
    auto get = [](const Counter& c) { return c.load(std::memory_order_relaxed); };
    LinkStats s;
    s.connections_accepted = get(connections_accepted);
    // Read after `accepted` so that a concurrent close never makes the difference negative.
    const std::uint64_t closed = get(connections_closed);
    s.connections_active = s.connections_accepted >= closed ? s.connections_accepted - closed : 0;
    s.target_connect_failures = get(target_connect_failures);
    s.accept_failures = get(accept_failures);
    s.stalls = get(stalls);
    s.drops = get(drops);
    s.cuts = get(cuts);
    for (int d = 0; d < 2; ++d) {
      s.bytes[d] = get(bytes[d]);
      s.chunks[d] = get(chunks[d]);
      s.chunks_delayed[d] = get(chunks_delayed[d]);
      s.bytes_discarded[d] = get(bytes_discarded[d]);
    }
    s.queued_bytes = get(queued_bytes);
    s.peak_direction_queued_bytes = get(peak_direction_queued_bytes);
    for (std::size_t i = 0; i < held_buckets.size(); ++i) s.held.buckets[i] = get(held_buckets[i]);
    s.held.chunks = get(held_chunks);
    s.held.sum_us = get(held_sum_us);
    s.held.min_us = s.held.chunks == 0 ? 0 : get(held_min_us);
    s.held.max_us = get(held_max_us);
    return s;
  }
};

}  // namespace dsekp::linkemu
