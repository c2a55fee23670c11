// The Redis the session store talks to: one server (redis_connection.hpp) or a Redis Cluster
// (redis_cluster_client.hpp), behind one call that names the key a command is for. On one
// server the key is ignored; on a cluster it picks the slot, hence the primary. Everything a
// command touches must be in that key's slot (the store's keys carry hash tags for that).
//
// Not thread-safe (one thread uses it, as the SessionStore it serves).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edge/store/redis/redis_cluster_client.hpp"
#include "edge/store/redis/redis_connection.hpp"

namespace dsekp::edge::redis {

class RedisClient {
 public:
  /// One server.
  explicit RedisClient(RedisEndpoint server);
  /// A Redis Cluster, its slot map asked of `seeds` (redis_cluster_client.hpp).
  explicit RedisClient(std::vector<RedisEndpoint> seeds);

  /// Connects (one server) or reads the slot map (cluster). false and last_error() if not.
  bool connect();
  [[nodiscard]] bool clustered() const noexcept { return cluster_ != nullptr; }

  /// `args` for `key` (and keys of its slot): the reply, null and last_error() if no server
  /// could be reached.
  Reply command(std::string_view key, std::span<const std::string_view> args);
  /// `commands` for `key`'s slot in one round trip; on a cluster followed by WAIT as `wait`
  /// asks (RedisClusterClient::pipeline). On one server `wait` is not used: its durability is
  /// its AOF's (redis_durability.hpp). Empty and last_error() on failure, a WAIT that saw too
  /// few replicas included.
  std::vector<Reply> pipeline(std::string_view key,
                              const std::vector<std::vector<std::string_view>>& commands,
                              ReplicaWait wait = {});
  /// Many batches at once (RedisClusterClient::pipeline_slots); on one server all of them in
  /// one pipeline, the slots not used. Each batch's replies, empty for one that failed.
  std::vector<std::vector<Reply>> pipeline_slots(const std::vector<SlotBatch>& batches,
                                                 ReplicaWait wait = {});
  /// `fn` on every primary's connection (the one server's, or each one's in the cluster's
  /// current map), e.g. for configuration checks; stops at the first false.
  bool for_each_primary(const std::function<bool(RedisConnection&)>& fn);

  void set_outage_handler(OutageHandler handler);
  [[nodiscard]] bool up() const noexcept;
  [[nodiscard]] std::uint64_t round_trips() const noexcept;
  [[nodiscard]] std::uint64_t connects() const noexcept;
  [[nodiscard]] const std::string& last_error() const noexcept;
  /// The cluster's client (redirect and map-read counts); null on one server.
  [[nodiscard]] const RedisClusterClient* cluster() const noexcept { return cluster_.get(); }

 private:
  std::unique_ptr<RedisConnection> server_;
  std::unique_ptr<RedisClusterClient> cluster_;
};

}  // namespace dsekp::edge::redis
