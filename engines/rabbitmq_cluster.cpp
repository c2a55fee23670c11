// Starting, killing and stopping private RabbitMQ nodes (see rabbitmq_cluster.hpp).
#include "engines/rabbitmq_cluster.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "engines/executables.hpp"
#include "experiment/interrupt.hpp"
#include "experiment/net.hpp"

namespace dsekp::engines {
namespace {

bool wait_for_port(const std::string& host, int port, experiment::Child& process,
                   std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process.running()) return false;
    if (experiment::accepts_tcp({host, static_cast<std::uint16_t>(port)})) return true;
    experiment::throw_if_interrupted();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

std::string RabbitMqCluster::executable() {
  return rabbitmq_server_path();
}

RabbitMqCluster::RabbitMqCluster(const std::string& dir, int nodes,
                                 const std::vector<ServerPlacement>& placements)
    : dir_(dir), long_names_(!placements.empty()) {
  if (executable().empty()) throw std::runtime_error("rabbitmq-server is not installed");
  std::filesystem::create_directories(dir_ + "/home");
  // One cookie for every node and the CLI, written before any node could make its own.
  const std::string cookie = dir_ + "/home/.erlang.cookie";
  std::ofstream(cookie) << "DSEKPTESTCOOKIE" << ::getpid();
  ::chmod(cookie.c_str(), S_IRUSR);
  std::ofstream(dir_ + "/enabled_plugins") << "[rabbitmq_mqtt].\n";
  epmd_port_ = experiment::free_loopback_port();
  epmd_ = std::make_unique<experiment::Child>(experiment::ChildSpec{
      "epmd",
      {epmd_path(), "-port", std::to_string(epmd_port_), "-address", "127.0.0.1"},
      dir_ + "/epmd.log",
      {}});
  if (!wait_for_port("127.0.0.1", epmd_port_, *epmd_, std::chrono::seconds(10))) {
    stop();
    throw std::runtime_error("epmd did not start: " + file_text(dir_ + "/epmd.log"));
  }
  nodes_.resize(static_cast<std::size_t>(nodes));
  for (int i = 0; i < nodes; ++i) {
    Node& n = nodes_[static_cast<std::size_t>(i)];
    if (static_cast<std::size_t>(i) < placements.size()) n.place = placements[i];
    n.name = "dsekp" + std::to_string(::getpid()) + "n" + std::to_string(i) + "@" +
             (long_names_ ? n.place.host : std::string("localhost"));
    n.dir = dir_ + "/node" + std::to_string(i);
    n.amqp_port = experiment::free_loopback_port();
    n.mqtt_port = experiment::free_loopback_port();
    n.dist_port = experiment::free_loopback_port();
    for (const char* sub : {"mnesia", "log"})
      std::filesystem::create_directories(n.dir + "/" + sub);
  }
  for (Node& n : nodes_) {
    std::ofstream conf(n.dir + "/rabbitmq.conf");
    conf << "listeners.tcp.1 = " << n.place.host << ":" << n.amqp_port << "\n"
         << "mqtt.listeners.tcp.1 = " << n.place.host << ":" << n.mqtt_port << "\n"
         << "mqtt.allow_anonymous = true\n"
         << "mqtt.durable_queue_type = quorum\n"
         << "loopback_users = none\n"
         // A node that hangs (SIGSTOP) is counted down after 15 s instead of 60: until then
         // the cluster cannot move the queue leaders it held.
         << "net_ticktime = 15\n"
         // RabbitMQ's advice for three or more nodes: a node that finds itself in a minority
         // (a frozen node thawed after the others counted it down) pauses until it sees the
         // majority again, instead of serving a partition of its own.
         << "cluster_partition_handling = pause_minority\n"
         << "log.console = false\n";
    if (nodes > 1) {
      conf << "cluster_formation.peer_discovery_backend = classic_config\n";
      for (std::size_t k = 0; k < nodes_.size(); ++k)
        conf << "cluster_formation.classic_config.nodes." << k + 1 << " = " << nodes_[k].name
             << "\n";
    }
  }
  // One node after the other: the first forms the cluster (its peers are not up yet), each next
  // one joins it. Started all at once, the nodes were once seen to leave the MQTT plugin's Raft
  // cluster without a leader for minutes ("mqtt_node: leader call - leader not known").
  for (Node& n : nodes_) {
    launch(n);
    if (const std::string why = serving(n, 120); !why.empty()) {
      const std::string text = logs();
      stop();
      throw std::runtime_error("RabbitMQ node " + n.name + " did not start (" + why +
                               "); the logs' ends:\n" + text);
    }
  }
  if (nodes > 1) {
    // Every node serves; wait until each also sees the others (the cluster is formed).
    const RunOutput r = control(0, {"await_online_nodes", std::to_string(nodes), "--timeout", "60"},
                                std::chrono::seconds(90));
    if (r.exit_code != 0) {
      const std::string text = r.output + logs();
      stop();
      throw std::runtime_error("the RabbitMQ nodes did not form one cluster:\n" + text);
    }
  }
}

void RabbitMqCluster::launch(Node& n) {
  if (long_names_ && !n.epmd) {
    // A placed node's peers ask the epmd of its address for its distribution port: one epmd in
    // each namespace (on every address there, 127.0.0.1 for the node itself included).
    n.epmd = std::make_unique<experiment::Child>(experiment::ChildSpec{
        "epmd " + n.place.netns,
        placed_argv(n.place, {epmd_path(), "-port", std::to_string(epmd_port_)}),
        n.dir + "/epmd.log",
        {}});
    // Up before the node, or the node's erl would start a daemon epmd of its own (outside our
    // children).
    if (!wait_for_port(n.place.host, epmd_port_, *n.epmd, std::chrono::seconds(10)))
      throw std::runtime_error("epmd did not start in " + n.place.netns + ": " +
                               file_text(n.dir + "/epmd.log"));
  }
  // Everything through the environment (the script reads it); /usr/bin/env sets it for the child.
  std::vector<std::string> argv = {
      "/usr/bin/env", "HOME=" + dir_ + "/home", "RABBITMQ_NODENAME=" + n.name,
      "RABBITMQ_NODE_IP_ADDRESS=" + n.place.host,
      "RABBITMQ_DIST_PORT=" + std::to_string(n.dist_port),
      "ERL_EPMD_PORT=" + std::to_string(epmd_port_), "RABBITMQ_MNESIA_BASE=" + n.dir + "/mnesia",
      "RABBITMQ_LOG_BASE=" + n.dir + "/log", "RABBITMQ_CONFIG_FILE=" + n.dir + "/rabbitmq.conf",
      "RABBITMQ_ENABLED_PLUGINS_FILE=" + dir_ + "/enabled_plugins",
      "RABBITMQ_PID_FILE=" + n.dir + "/rabbit.pid",
      // No scheduler busy-waiting: an Erlang scheduler out of work spins a while before it
      // sleeps, which on a machine shared with the edges and the other nodes takes their CPU
      // and is counted as the node's own (docs/SCALING.md "Per-node costs").
      "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=+sbwt none +sbwtdcpu none +sbwtdio none",
      // The start script then execs the VM instead of running it in the background behind a
      // shell: the VM is our child itself, gets our SIGTERM (a clean stop) and keeps the
      // parent-death signal, so it dies with us even if we are SIGKILLed.
      "RUNNING_UNDER_SYSTEMD=true"};
  // A node on loopback finds the suite's epmd there (and would start none elsewhere).
  argv.push_back(long_names_ ? "RABBITMQ_USE_LONGNAME=true" : "ERL_EPMD_ADDRESS=127.0.0.1");
  argv.push_back(executable());
  n.server = std::make_unique<experiment::Child>(
      experiment::ChildSpec{n.name, placed_argv(n.place, argv), n.dir + "/rabbit.out", {}});
}

std::string RabbitMqCluster::serving(Node& n, int timeout_s) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::seconds(timeout_s);
  for (int port : {n.mqtt_port, n.amqp_port}) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(
        deadline - std::chrono::steady_clock::now());
    if (wait_for_port(n.place.host, port, *n.server, std::max(left, std::chrono::seconds(1))))
      continue;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    return std::string(n.server->running() ? "no listener on port "
                                           : "the VM exited before port ") +
           std::to_string(port) + " after " + std::to_string(waited.count()) + " ms";
  }
  return "";
}

RunOutput RabbitMqCluster::control(int via, const std::vector<std::string>& args,
                                   std::chrono::seconds timeout) {
  const std::string ctl = rabbitmqctl_path();
  std::vector<std::string> argv = {"/usr/bin/env", "HOME=" + dir_ + "/home",
                                   "ERL_EPMD_PORT=" + std::to_string(epmd_port_)};
  if (long_names_) argv.push_back("RABBITMQ_USE_LONGNAME=true");
  argv.insert(argv.end(), {ctl, "-n", nodes_.at(static_cast<std::size_t>(via)).name});
  if (long_names_) argv.push_back("--longnames");
  argv.insert(argv.end(), args.begin(), args.end());
  return run_to_end(argv, dir_, timeout);
}

void RabbitMqCluster::await_whole(int via) {
  if (size() < 2) return;
  const RunOutput r =
      control(via, {"await_online_nodes", std::to_string(size()), "--timeout", "120"},
              std::chrono::seconds(150));
  if (r.exit_code != 0)
    throw std::runtime_error("the RabbitMQ cluster is not whole before the next fault:\n" +
                             r.output + logs());
}

std::string RabbitMqCluster::amqp_nodes(int first) const {
  std::string out;
  for (int k = 0; k < size(); ++k) {
    const int i = (first + k) % size();
    if (!out.empty()) out += ",";
    const Node& n = nodes_.at(static_cast<std::size_t>(i));
    out += n.place.host + ":" + std::to_string(n.amqp_port);
  }
  return out;
}

void RabbitMqCluster::kill(int node) {
  Node& n = nodes_.at(static_cast<std::size_t>(node));
  if (vm_of(n) <= 0) throw std::runtime_error("no Erlang VM found for " + n.name + " to kill");
  stop_node(n, false);
}

void RabbitMqCluster::start(int node) {
  Node& n = nodes_.at(static_cast<std::size_t>(node));
  std::filesystem::remove(n.dir + "/rabbit.pid");
  launch(n);
  if (const std::string why = serving(n, 180); !why.empty())
    throw std::runtime_error("RabbitMQ node " + n.name + " did not restart (" + why +
                             "); its output:\n" + file_text(n.dir + "/rabbit.out") +
                             "\nits log:\n" + log(node));
}

void RabbitMqCluster::restart(int node) {
  await_whole((node + 1) % size());
  stop_node(nodes_.at(static_cast<std::size_t>(node)), true);
  start(node);
}

pid_t RabbitMqCluster::vm_of(const Node& n) const {
  const std::string pid_text = file_text(n.dir + "/rabbit.pid");
  pid_t vm = 0;
  try {
    vm = pid_text.empty() ? 0 : static_cast<pid_t>(std::stol(pid_text));
  } catch (const std::exception&) {
    vm = 0;
  }
  // Only if that pid is still this node's VM (its environment names the node: the command line
  // does not), never another process.
  const std::string environment = file_text("/proc/" + std::to_string(vm) + "/environ");
  const std::string name_entry = "RABBITMQ_NODENAME=" + n.name;
  const bool is_node = vm > 1 && environment.find(name_entry + '\0') != std::string::npos;
  return is_node ? vm : 0;
}

void RabbitMqCluster::freeze(int node) {
  const Node& n = nodes_.at(static_cast<std::size_t>(node));
  const pid_t vm = vm_of(n);
  if (vm <= 0) throw std::runtime_error("no Erlang VM found for " + n.name + " to freeze");
  ::kill(vm, SIGSTOP);
}

void RabbitMqCluster::thaw(int node) {
  if (const pid_t vm = vm_of(nodes_.at(static_cast<std::size_t>(node))); vm > 0)
    ::kill(vm, SIGCONT);
}

void RabbitMqCluster::stop_node(Node& n, bool graceful) {
  // The script forwards SIGTERM to the Erlang VM and waits for it; the VM is killed directly if
  // it outlives the script (or at once, for a crash). A frozen VM is let go on first.
  const pid_t vm = vm_of(n);
  if (vm > 0) ::kill(vm, graceful ? SIGCONT : SIGKILL);
  if (n.server) (void)n.server->stop(std::chrono::milliseconds(graceful ? 15000 : 3000));
  n.server.reset();
  if (vm > 0 && vm_of(n) == vm) ::kill(vm, SIGKILL);
}

void RabbitMqCluster::stop() {
  // Nothing of a test's nodes is kept: killed, not shut down (seconds per node saved).
  for (Node& n : nodes_) {
    stop_node(n, false);
    if (n.epmd) (void)n.epmd->stop(std::chrono::milliseconds(3000));
    n.epmd.reset();
  }
  if (epmd_) (void)epmd_->stop(std::chrono::milliseconds(3000));
  epmd_.reset();
}

RabbitMqCluster::~RabbitMqCluster() {
  stop();
}

std::string RabbitMqCluster::log(int node) const {
  const Node& n = nodes_.at(static_cast<std::size_t>(node));
  return file_text(n.dir + "/log/" + n.name + ".log");
}

std::string RabbitMqCluster::logs(std::size_t lines) const {
  std::string out;
  for (int i = 0; i < size(); ++i) {
    const std::string text = log(i);
    std::size_t from = text.size();
    for (std::size_t n = 0; n <= lines && from > 0; ++n) from = text.rfind('\n', from - 1);
    from = from == std::string::npos || from >= text.size() ? 0 : from + 1;
    out += "--- " + nodes_[static_cast<std::size_t>(i)].name + " (last " + std::to_string(lines) +
           " lines)\n" + text.substr(from);
  }
  return out;
}

}  // namespace dsekp::engines
