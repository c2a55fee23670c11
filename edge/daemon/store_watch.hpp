// The shared store as the daemon watches it: its reachability (/healthz, dsekp_store_up), the
// fail-closed pause while it cannot be reached, and its metrics (round trips, the session-key
// cache). With the local SQLite store there is nothing to watch: the store is always up and the
// counters stay 0.
//
// The pause: a store call that cannot reach Redis waits in the outage handler, on the loop
// thread, so nothing more is read from the broker and nothing is acknowledged, until Redis
// answers or the edge stops.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "edge/metrics/metrics_registry.hpp"
#include "edge/service/handle_result.hpp"
#include "edge/store/redis/redis_probe.hpp"
#include "edge/store/redis/redis_session_store.hpp"

namespace dsekp::edge::daemon {

// The shared store's reachability: the probe's PING (an idle edge notices too) and the loop
// thread's own finding (a store call waiting for Redis). Read by any thread.
struct StoreHealth {
  std::atomic<const redis::RedisProbe*> probe{nullptr};  // null: the local SQLite store (up)
  std::atomic<bool> waiting{false};  // the loop thread is paused on an unreachable store
  [[nodiscard]] bool up() const noexcept {
    const redis::RedisProbe* p = probe.load();
    return p == nullptr || (p->up() && !waiting.load(std::memory_order_relaxed));
  }
};

class StoreWatch {
 public:
  /// Declares the store metrics in `registry` and, with a shared store (non-null), installs the
  /// outage handler and starts the probe on `endpoint`. `registry`, `shared` and `stopping` must
  /// outlive this object; `stopping` set ends a pause.
  StoreWatch(metrics::Registry& registry, RedisSessionStore* shared,
             const redis::RedisProbeTarget& target, const std::atomic<bool>& stopping);
  ~StoreWatch();  // removes the outage handler, stops the probe
  StoreWatch(const StoreWatch&) = delete;
  StoreWatch& operator=(const StoreWatch&) = delete;

  [[nodiscard]] const StoreHealth& health() const noexcept { return health_; }
  /// Loop thread, after each message and batch: the end of a pause, the round-trip counter and
  /// the cache gauge.
  void after_store_use();
  /// A DATA frame's session-key cache lookup (none: not counted).
  void count_lookup(CacheLookup lookup) noexcept;

 private:
  bool wait_for_store(const std::string& why);

  RedisSessionStore* shared_;
  const std::atomic<bool>& stopping_;
  StoreHealth health_;
  metrics::Gauge* up_ = nullptr;
  metrics::Counter* round_trips_ = nullptr;
  std::uint64_t round_trips_counted_ = 0;
  metrics::Counter* cache_hits_ = nullptr;
  metrics::Counter* cache_misses_ = nullptr;
  metrics::Gauge* cache_devices_ = nullptr;
  // Last: its thread uses the members above, so it is stopped before they go.
  std::unique_ptr<redis::RedisProbe> probe_;
};

}  // namespace dsekp::edge::daemon
