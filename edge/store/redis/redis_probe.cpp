// RedisProbe (see redis_probe.hpp).
#include "redis_probe.hpp"

#include <array>
#include <string_view>

namespace dsekp::edge::redis {

RedisProbe::RedisProbe(RedisEndpoint endpoint, std::chrono::milliseconds interval,
                       std::function<void(bool)> on_result)
    : connection_(std::move(endpoint)), interval_(interval), on_result_(std::move(on_result)) {
  thread_ = std::thread([this] { run(); });
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
    const std::array<std::string_view, 1> ping{"PING"};
    const Reply r = connection_.command(ping);
    const bool up =
        r != nullptr && r->type == REDIS_REPLY_STATUS && std::string_view(r->str, r->len) == "PONG";
    up_.store(up, std::memory_order_relaxed);
    if (on_result_) on_result_(up);
    lock.lock();
    cv_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace dsekp::edge::redis
