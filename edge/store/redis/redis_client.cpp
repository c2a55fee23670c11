// One server or a cluster behind one call (see redis_client.hpp).
#include "edge/store/redis/redis_client.hpp"

namespace dsekp::edge::redis {

RedisClient::RedisClient(RedisEndpoint server)
    : server_(std::make_unique<RedisConnection>(std::move(server))) {}

RedisClient::RedisClient(std::vector<RedisEndpoint> seeds)
    : cluster_(std::make_unique<RedisClusterClient>(std::move(seeds))) {}

bool RedisClient::connect() {
  return cluster_ ? cluster_->connect() : server_->connect();
}

Reply RedisClient::command(std::string_view key, std::span<const std::string_view> args) {
  return cluster_ ? cluster_->command(key_slot(key), args) : server_->command(args);
}

std::vector<Reply> RedisClient::pipeline(std::string_view key,
                                         const std::vector<std::vector<std::string_view>>& commands,
                                         ReplicaWait wait) {
  if (cluster_) return cluster_->pipeline(key_slot(key), commands, wait);
  return server_->pipeline(commands);
}

std::vector<std::vector<Reply>> RedisClient::pipeline_slots(const std::vector<SlotBatch>& batches,
                                                            ReplicaWait wait) {
  if (cluster_) return cluster_->pipeline_slots(batches, wait);
  std::vector<std::vector<std::string_view>> commands;
  for (const SlotBatch& b : batches)
    commands.insert(commands.end(), b.commands.begin(), b.commands.end());
  std::vector<Reply> replies = server_->pipeline(commands);
  std::vector<std::vector<Reply>> out(batches.size());
  if (replies.empty()) return out;
  std::size_t at = 0;
  for (std::size_t i = 0; i < batches.size(); ++i)
    for (std::size_t k = 0; k < batches[i].commands.size(); ++k)
      out[i].push_back(std::move(replies[at++]));
  return out;
}

bool RedisClient::for_each_primary(const std::function<bool(RedisConnection&)>& fn) {
  return cluster_ ? cluster_->for_each_primary(fn) : fn(*server_);
}

void RedisClient::set_outage_handler(OutageHandler handler) {
  if (cluster_) {
    cluster_->set_outage_handler(std::move(handler));
  } else {
    server_->set_outage_handler(std::move(handler));
  }
}

bool RedisClient::up() const noexcept {
  return cluster_ ? cluster_->up() : server_->up();
}

std::uint64_t RedisClient::round_trips() const noexcept {
  return cluster_ ? cluster_->round_trips() : server_->round_trips();
}

std::uint64_t RedisClient::connects() const noexcept {
  return cluster_ ? cluster_->connects() : server_->connects();
}

const std::string& RedisClient::last_error() const noexcept {
  return cluster_ ? cluster_->last_error() : server_->last_error();
}

}  // namespace dsekp::edge::redis
