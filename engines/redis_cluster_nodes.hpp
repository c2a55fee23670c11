// A private Redis Cluster (for the tests and `dsekp bench scale --cluster`): `primaries`
// redis-server nodes in cluster mode, each with `replicas` replicas, on loopback ports of their own
// (client and cluster bus), joined with `redis-cli --cluster create`, AOF on (appendfsync always)
// and a short node timeout (1 s) so a killed primary's replica is promoted within a few seconds.
// Nodes can be killed (SIGKILL) and started again on the same ports and directories; everything is
// killed on destruction.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engines/redis_server.hpp"

namespace dsekp::engines {

class RedisClusterNodes {
 public:
  /// Starts and joins the nodes in `dir`; returns once every slot is served and every replica
  /// has synchronised with its primary. Throws with the nodes' logs if that does not happen
  /// within 60 s.
  /// `placements`: where each node listens (node i at placements[i]; default: all on
  /// 127.0.0.1 in this network namespace).
  RedisClusterNodes(const std::string& dir, int primaries = 3, int replicas = 1,
                    const std::vector<ServerPlacement>& placements = {});
  ~RedisClusterNodes();
  RedisClusterNodes(const RedisClusterNodes&) = delete;
  RedisClusterNodes& operator=(const RedisClusterNodes&) = delete;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(nodes_.size()); }
  [[nodiscard]] int port(int node) const { return nodes_.at(index(node))->port(); }
  /// The node's process id (of its latest start).
  [[nodiscard]] pid_t pid(int node) const { return nodes_.at(index(node))->pid(); }
  [[nodiscard]] const std::string& host(int node) const { return nodes_.at(index(node))->host(); }
  /// "HOST1:P1,HOST2:P2,...": every node, for a client's seed list.
  [[nodiscard]] std::string seeds() const;
  /// The node (index) that a live node's slot map names as the primary of `slot`; -1 if none
  /// answers.
  [[nodiscard]] int primary_of(std::uint16_t slot) const;
  /// The node's replicas according to the live nodes' view; empty if none answers.
  [[nodiscard]] std::vector<int> replicas_of(int primary) const;
  /// SIGKILL of one node: no shutdown, only its AOF survives.
  void kill(int node);
  /// SIGSTOP / SIGCONT of one node (it hangs with its connections open).
  void freeze(int node) { nodes_.at(index(node))->freeze(); }
  void thaw(int node) { nodes_.at(index(node))->thaw(); }
  /// Starts a killed node again on its ports and directory (it rejoins from its nodes.conf).
  void start(int node);
  /// Whether `node` is running.
  [[nodiscard]] bool alive(int node) const { return alive_.at(index(node)); }
  /// Waits until every live node reports cluster_state:ok and agrees on each slot's primary.
  bool wait_until_ok(std::chrono::seconds timeout) const;
  /// One command on `node` (see RedisServer::command).
  std::string command(int node, const std::vector<std::string>& args) const;
  /// Every node's log.
  [[nodiscard]] std::string logs() const;

 private:
  [[nodiscard]] static std::size_t index(int node) { return static_cast<std::size_t>(node); }
  [[nodiscard]] int node_with_port(int port) const;
  [[nodiscard]] bool replicas_synchronised() const;

  std::string dir_;
  std::vector<std::unique_ptr<RedisServer>> nodes_;
  std::vector<bool> alive_;
};

}  // namespace dsekp::engines
