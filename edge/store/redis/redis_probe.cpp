// RedisProbe (see redis_probe.hpp).
#include "redis_probe.hpp"

#include <array>
#include <string_view>

namespace dsekp::edge::redis {

RedisProbe::RedisProbe(const RedisProbeTarget& target, std::chrono::milliseconds interval,
                       std::function<void(bool)> on_result)
    : cluster_(target.cluster), interval_(interval), on_result_(std::move(on_result)) {
  for (const RedisEndpoint& e : target.nodes)
    connections_.push_back(std::make_unique<RedisConnection>(e));
  thread_ = std::thread([this] { run(); });
}

bool RedisProbe::check() {
  for (const auto& connection : connections_) {
    if (!cluster_) {
      const std::array<std::string_view, 1> ping{"PING"};
      const Reply r = connection->command(ping);
      return r != nullptr && r->type == REDIS_REPLY_STATUS &&
             std::string_view(r->str, r->len) == "PONG";
    }
    const std::array<std::string_view, 2> info{"CLUSTER", "INFO"};
    const Reply r = connection->command(info);
    if (r == nullptr) continue;  // that node is down: ask the next
    return r->type == REDIS_REPLY_STRING &&
           std::string_view(r->str, r->len).find("cluster_state:ok") != std::string_view::npos;
  }
  return false;
}

RedisProbe::~RedisProbe() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void RedisProbe::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const bool up = check();
    up_.store(up, std::memory_order_relaxed);
    if (on_result_) on_result_(up);
    lock.lock();
    cv_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace dsekp::edge::redis
