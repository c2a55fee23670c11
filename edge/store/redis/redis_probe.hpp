// A background PING of the Redis server, for the edge's /healthz and dsekp_store_up: the store's
// own connection says only whether its last command got through, which an idle edge never
// renews, so an edge without traffic would report a dead Redis as healthy. The probe has its own
// connection and thread, PINGs every `interval` (each PING bounded by the endpoint's timeouts),
// and publishes the answer in an atomic that any thread may read.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "redis_connection.hpp"

namespace dsekp::edge::redis {

/// What the probe asks: one server (PING -> PONG), or the nodes of a Redis Cluster in turn
/// until one answers CLUSTER INFO (up when it says cluster_state:ok: every slot is served).
struct RedisProbeTarget {
  std::vector<RedisEndpoint> nodes;
  bool cluster = false;
};

class RedisProbe {
 public:
  /// Starts the thread; the first check runs at once. `on_result` (optional) is called on the
  /// probe's thread after every check with its outcome (the daemon sets a gauge there).
  RedisProbe(const RedisProbeTarget& target, std::chrono::milliseconds interval,
             std::function<void(bool up)> on_result = {});
  ~RedisProbe();  // stops and joins
  RedisProbe(const RedisProbe&) = delete;
  RedisProbe& operator=(const RedisProbe&) = delete;

  /// Whether the last check was answered as up.
  [[nodiscard]] bool up() const noexcept { return up_.load(std::memory_order_relaxed); }

 private:
  void run();
  bool check();

  std::vector<std::unique_ptr<RedisConnection>> connections_;  // one per node asked
  bool cluster_ = false;
  std::chrono::milliseconds interval_;
  std::function<void(bool)> on_result_;
  std::atomic<bool> up_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace dsekp::edge::redis
