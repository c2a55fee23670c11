// Starting, joining, killing and inspecting a private Redis Cluster (see redis_cluster_nodes.hpp).
// The nodes' views are read from CLUSTER NODES (text: one line per node, its flags and slot
// ranges).
#include "engines/redis_cluster_nodes.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "engines/executables.hpp"
#include "engines/run_to_end.hpp"
#include "experiment/net.hpp"

namespace dsekp::engines {
namespace {

struct NodeLine {
  std::string id;
  int port = 0;
  std::string flags;
  std::string primary_id;  // "-" for a primary
  std::vector<std::pair<int, int>> slots;
};

std::vector<NodeLine> parse_cluster_nodes(const std::string& text) {
  std::vector<NodeLine> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    NodeLine n;
    std::string address, ping, pong, epoch, link;
    if (!(fields >> n.id >> address >> n.flags >> n.primary_id >> ping >> pong >> epoch >> link))
      continue;
    const std::size_t colon = address.find(':');
    const std::size_t at = address.find('@');
    if (colon == std::string::npos) continue;
    n.port = std::stoi(address.substr(colon + 1, at - colon - 1));
    std::string range;
    while (fields >> range) {
      if (range.starts_with("[")) continue;  // a slot being migrated
      const std::size_t dash = range.find('-');
      const int first = std::stoi(range.substr(0, dash));
      n.slots.emplace_back(first,
                           dash == std::string::npos ? first : std::stoi(range.substr(dash + 1)));
    }
    out.push_back(std::move(n));
  }
  return out;
}

bool failed(const NodeLine& n) {
  return n.flags.find("fail") != std::string::npos;
}

}  // namespace

RedisClusterNodes::RedisClusterNodes(const std::string& dir, int primaries, int replicas,
                                     const std::vector<ServerPlacement>& placements)
    : dir_(dir) {
  const int count = primaries * (1 + replicas);
  for (int i = 0; i < count; ++i) {
    const std::string node_dir = dir_ + "/node" + std::to_string(i);
    std::filesystem::create_directories(node_dir);
    // The bus port is given (client port + 10,000, Redis's default, may not exist).
    nodes_.push_back(std::make_unique<RedisServer>(
        node_dir,
        std::vector<std::string>{"--cluster-enabled", "yes", "--cluster-config-file",
                                 node_dir + "/nodes.conf", "--cluster-node-timeout", "1000",
                                 "--cluster-port",
                                 std::to_string(experiment::free_loopback_port())},
        index(i) < placements.size() ? placements[index(i)] : ServerPlacement{}));
    alive_.push_back(true);
  }
  if (redis_cli_path().empty())
    throw std::runtime_error("no redis-cli found: install the redis-tools package");
  std::vector<std::string> create = {redis_cli_path(), "--cluster", "create"};
  for (const auto& n : nodes_) create.push_back(n->host() + ":" + std::to_string(n->port()));
  for (const std::string& a :
       {std::string("--cluster-replicas"), std::to_string(replicas), std::string("--cluster-yes")})
    create.push_back(a);
  const RunOutput r = run_to_end(create, dir_, std::chrono::seconds(60));
  if (r.exit_code != 0)
    throw std::runtime_error("redis-cli --cluster create failed:\n" + r.output + logs());
  if (!wait_until_ok(std::chrono::seconds(60)))
    throw std::runtime_error("the Redis Cluster did not become ready:\n" + logs());
}

RedisClusterNodes::~RedisClusterNodes() = default;  // each RedisServer kills its process

std::string RedisClusterNodes::seeds() const {
  std::string out;
  for (const auto& n : nodes_)
    out += (out.empty() ? "" : ",") + (n->host() + ":" + std::to_string(n->port()));
  return out;
}

int RedisClusterNodes::node_with_port(int port) const {
  for (int i = 0; i < size(); ++i)
    if (nodes_[index(i)]->port() == port) return i;
  return -1;
}

int RedisClusterNodes::primary_of(std::uint16_t slot) const {
  for (int i = 0; i < size(); ++i) {
    if (!alive(i)) continue;
    for (const NodeLine& n : parse_cluster_nodes(command(i, {"CLUSTER", "NODES"}))) {
      if (failed(n) || n.flags.find("master") == std::string::npos) continue;
      for (const auto& [first, last] : n.slots)
        if (slot >= first && slot <= last) return node_with_port(n.port);
    }
  }
  return -1;
}

std::vector<int> RedisClusterNodes::replicas_of(int primary) const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i) {
    if (!alive(i)) continue;
    const std::vector<NodeLine> view = parse_cluster_nodes(command(i, {"CLUSTER", "NODES"}));
    std::string primary_id;
    for (const NodeLine& n : view)
      if (n.port == port(primary)) primary_id = n.id;
    for (const NodeLine& n : view)
      if (!primary_id.empty() && n.primary_id == primary_id) out.push_back(node_with_port(n.port));
    return out;
  }
  return out;
}

void RedisClusterNodes::kill(int node) {
  nodes_.at(index(node))->kill();
  alive_.at(index(node)) = false;
}

void RedisClusterNodes::start(int node) {
  nodes_.at(index(node))->restart();
  alive_.at(index(node)) = true;
}

bool RedisClusterNodes::replicas_synchronised() const {
  for (int i = 0; i < size(); ++i) {
    if (!alive(i)) continue;
    const std::string info = command(i, {"INFO", "replication"});
    if (info.find("role:slave") != std::string::npos &&
        info.find("master_link_status:up") == std::string::npos)
      return false;
  }
  return true;
}

bool RedisClusterNodes::wait_until_ok(std::chrono::seconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    bool ok = true;
    std::set<std::string> views;  // each live node's "port:ranges" of the serving primaries
    for (int i = 0; ok && i < size(); ++i) {
      if (!alive(i)) continue;
      ok = command(i, {"CLUSTER", "INFO"}).find("cluster_state:ok") != std::string::npos;
      std::map<int, std::string> primaries;
      for (const NodeLine& n : parse_cluster_nodes(command(i, {"CLUSTER", "NODES"}))) {
        if (failed(n) || n.slots.empty()) continue;
        for (const auto& [first, last] : n.slots)
          primaries[first] += std::to_string(n.port) + ":" + std::to_string(last) + " ";
      }
      std::string view;
      for (const auto& [first, text] : primaries) view += std::to_string(first) + "-" + text;
      views.insert(view);
    }
    if (ok && views.size() == 1 && replicas_synchronised()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::string RedisClusterNodes::command(int node, const std::vector<std::string>& args) const {
  return nodes_.at(index(node))->command(args);
}

std::string RedisClusterNodes::logs() const {
  std::string out;
  for (int i = 0; i < size(); ++i)
    out += "--- node " + std::to_string(i) + "\n" + nodes_[index(i)]->log();
  return out;
}

}  // namespace dsekp::engines
