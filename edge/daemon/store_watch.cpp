// StoreWatch (see store_watch.hpp).
#include "edge/daemon/store_watch.hpp"

#include <chrono>
#include <thread>

#include "edge/logging/edge_logger.hpp"

namespace dsekp::edge::daemon {

StoreWatch::StoreWatch(metrics::Registry& registry, RedisSessionStore* shared,
                       const redis::RedisProbeTarget& target, const std::atomic<bool>& stopping)
    : shared_(shared), stopping_(stopping) {
  up_ = &registry
             .add_gauge({"dsekp_store_up",
                         "1 while the session store is reachable (always 1 for the local SQLite "
                         "store); 0 while the edge pauses, accepting nothing.",
                         {},
                         {}})
             .get();
  up_->set(1);
  round_trips_ = &registry
                      .add_counter({"dsekp_store_round_trips_total",
                                    "Network round trips to the shared session store (0 for the "
                                    "local SQLite store).",
                                    {},
                                    {}})
                      .get();
  auto& cache_lookups = registry.add_counter(
      {"dsekp_session_cache_lookups_total",
       "DATA frames by whether they took the store's uplink fast path (Redis store: their session "
       "keys were in this edge's cache; SQLite store: their device's state was in memory). A "
       "miss costs a state read.",
       {"result"},
       {{"hit"}, {"miss"}}});
  cache_hits_ = &cache_lookups.at({"hit"});
  cache_misses_ = &cache_lookups.at({"miss"});
  cache_devices_ = &registry
                        .add_gauge({"dsekp_session_cache_devices",
                                    "Devices whose session keys this edge holds (Redis store; at "
                                    "most --session-cache-devices).",
                                    {},
                                    {}})
                        .get();
  if (shared_ == nullptr) return;
  shared_->set_outage_handler([this](const std::string& why) { return wait_for_store(why); });
  probe_ = std::make_unique<redis::RedisProbe>(target, std::chrono::milliseconds(500),
                                               [this](bool) { up_->set(health_.up() ? 1 : 0); });
  health_.probe = probe_.get();
}

StoreWatch::~StoreWatch() {
  if (shared_ != nullptr) shared_->set_outage_handler({});
  health_.probe = nullptr;
  probe_.reset();
}

bool StoreWatch::wait_for_store(const std::string& why) {
  if (stopping_.load()) return false;
  if (!health_.waiting.exchange(true)) {
    logging::logger().error(
        "store unreachable ({}): not reading from the broker, nothing acknowledged, until it "
        "answers",
        why);
    up_->set(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return !stopping_.load();
}

void StoreWatch::after_store_use() {
  if (shared_ == nullptr) return;
  if (health_.waiting.load() && shared_->up()) {
    health_.waiting = false;
    up_->set(health_.up() ? 1 : 0);
    logging::logger().warn("store reachable again: reading from the broker again");
  }
  const std::uint64_t now = shared_->round_trips();
  round_trips_->add(now - round_trips_counted_);
  round_trips_counted_ = now;
  cache_devices_->set(static_cast<double>(shared_->cached_devices()));
}

void StoreWatch::count_lookup(CacheLookup lookup) noexcept {
  if (lookup == CacheLookup::hit) cache_hits_->inc();
  if (lookup == CacheLookup::miss) cache_misses_->inc();
}

}  // namespace dsekp::edge::daemon
