// Private RabbitMQ nodes with the MQTT plugin (for the tests and `dsekp bench scale --cluster`),
// one or a cluster of several, on loopback: their own epmd (a child process on a free loopback
// port, so no system-wide epmd is started or left behind), one Erlang cookie written before any
// node starts, each node's name, Mnesia and log dirs in the given dir, an AMQP and an MQTT listener
// on free loopback ports, anonymous MQTT logins (the guest account, allowed on loopback) and MQTT
// sessions in quorum queues. Several nodes form one cluster by themselves (peer discovery from the
// configured node list); the constructor returns once every node serves and the cluster has them
// all. A node can be killed (SIGKILL of its Erlang VM) and started again with its data. Stopped on
// destruction (SIGTERM, then SIGKILL for what is left). A node takes 10-25 s to start here.
// For partition tests the nodes can instead each run in a network namespace of their own, on an
// address there (see the constructor).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engines/run_to_end.hpp"
#include "engines/server_placement.hpp"
#include "experiment/process.hpp"

namespace dsekp::engines {

class RabbitMqCluster {
 public:
  /// The rabbitmq-server script (rabbitmq_server_path()), or "" if RabbitMQ is not installed.
  static std::string executable();

  /// Starts `nodes` nodes and waits (at most 120 s) until each serves MQTT and AMQP and all are
  /// in one cluster; throws with their logs otherwise.
  /// `placements` (partition tests): node i listens on placements[i].host and runs in its
  /// network namespace, with a long node name (name@address) and an epmd of its own there;
  /// default: every node on 127.0.0.1 in this namespace.
  RabbitMqCluster(const std::string& dir, int nodes,
                  const std::vector<ServerPlacement>& placements = {});
  ~RabbitMqCluster();
  RabbitMqCluster(const RabbitMqCluster&) = delete;
  RabbitMqCluster& operator=(const RabbitMqCluster&) = delete;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(nodes_.size()); }
  [[nodiscard]] const std::string& host(int node) const { return nodes_.at(node).place.host; }
  [[nodiscard]] int mqtt_port(int node) const { return nodes_.at(node).mqtt_port; }
  [[nodiscard]] int amqp_port(int node) const { return nodes_.at(node).amqp_port; }
  /// The node's Erlang VM (beam.smp), or 0 if it is not running.
  [[nodiscard]] pid_t vm_pid(int node) const { return vm_of(nodes_.at(node)); }
  /// "HOST:PORT,..." of the AMQP listeners, node `first` first (for `dsekp edge --amqp`).
  [[nodiscard]] std::string amqp_nodes(int first = 0) const;
  /// Throws unless every node is in the cluster, as seen from node `via`, within two minutes
  /// (rabbitmqctl await_online_nodes). Tests call it before their faults, restart() before
  /// each stop: a fault on a cluster still recovering from the last one is another test, and a
  /// node restarted while a peer does not answer can wait 100 s in the MQTT plugin's start (it
  /// asks the peers for its Raft cluster's members) before it serves.
  void await_whole(int via = 0);

  /// SIGKILL of the node's Erlang VM (a crash: nothing flushed, connections reset).
  void kill(int node);
  /// Starts a killed node again with its data and waits until it serves; throws otherwise.
  void start(int node);
  /// SIGSTOP / SIGCONT of the node's Erlang VM: a node that hangs with its sockets open.
  void freeze(int node);
  void thaw(int node);
  /// A clean stop of the node (SIGTERM: it leaves the cluster in order), then start(node).
  void restart(int node);
  /// rabbitmqctl `args` against node `via` (the cluster's cookie and epmd), e.g.
  /// {"import_definitions", path}; its output and exit code.
  RunOutput control(int via, const std::vector<std::string>& args, std::chrono::seconds timeout);
  [[nodiscard]] std::string log(int node) const;
  /// The last `lines` lines of every node's log, for failure messages.
  [[nodiscard]] std::string logs(std::size_t lines = 40) const;

 private:
  struct Node {
    std::string name;
    std::string dir;
    int amqp_port = 0;
    int mqtt_port = 0;
    int dist_port = 0;
    ServerPlacement place;
    std::unique_ptr<experiment::Child> server;
    std::unique_ptr<experiment::Child> epmd;  // placed nodes only: the epmd of its namespace
  };
  void launch(Node& node);
  /// Waits (one deadline) until the node's MQTT and AMQP listeners accept connections; "" if
  /// they do, else why not (the VM exited, or the time ran out) and after how long.
  std::string serving(Node& node, int timeout_s);
  void stop_node(Node& node, bool graceful);
  // The node's Erlang VM (from its pid file, checked against its environment), or 0.
  pid_t vm_of(const Node& node) const;
  void stop();

  std::string dir_;
  int epmd_port_ = 0;
  bool long_names_ = false;  // placed nodes: name@address
  std::unique_ptr<experiment::Child> epmd_;
  std::vector<Node> nodes_;
};

}  // namespace dsekp::engines
