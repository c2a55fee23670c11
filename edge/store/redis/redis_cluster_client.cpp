// Slot routing, redirects and failover for a Redis Cluster (see redis_cluster_client.hpp).
#include "edge/store/redis/redis_cluster_client.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <thread>

namespace dsekp::edge::redis {
namespace {

bool is_error(const Reply& r, std::string_view prefix) {
  return r != nullptr && r->type == REDIS_REPLY_ERROR &&
         std::string_view(r->str, r->len).starts_with(prefix);
}

/// "MOVED 3999 127.0.0.1:6381" / "ASK 3999 127.0.0.1:6381": the host and port named.
bool redirect_target(const Reply& r, std::string& host, int& port) {
  const std::string_view text(r->str, r->len);
  const std::size_t space = text.rfind(' ');
  const std::size_t colon = text.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space)
    return false;
  host.assign(text.substr(space + 1, colon - space - 1));
  const std::string_view digits = text.substr(colon + 1);
  return std::from_chars(digits.data(), digits.data() + digits.size(), port).ec == std::errc{} &&
         !host.empty();
}

std::string reply_text(const Reply& r) {
  return r != nullptr && r->str != nullptr ? std::string(r->str, r->len) : std::string();
}

}  // namespace

RedisClusterClient::RedisClusterClient(std::vector<RedisEndpoint> seeds)
    : seeds_(std::move(seeds)) {
  owners_.fill(kNoNode);
}

RedisClusterClient::~RedisClusterClient() = default;

std::int16_t RedisClusterClient::node_at(const std::string& host, int port) {
  const std::string address = host + ":" + std::to_string(port);
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].address == address) return static_cast<std::int16_t>(i);
  RedisEndpoint endpoint = seeds_.empty() ? RedisEndpoint{} : seeds_.front();
  endpoint.host = host;
  endpoint.port = port;
  nodes_.push_back(Node{address, std::make_unique<RedisConnection>(std::move(endpoint))});
  return static_cast<std::int16_t>(nodes_.size() - 1);
}

bool RedisClusterClient::connect() {
  for (const RedisEndpoint& seed : seeds_) (void)node_at(seed.host, seed.port);
  return read_slot_map();
}

bool RedisClusterClient::read_slot_map() {
  ++map_reads_;
  // Nodes of the current map first (a seed may be long gone), each asked at most once.
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (read_slot_map_from(nodes_[i])) return true;
  return false;
}

bool RedisClusterClient::read_slot_map_from(Node& node) {
  constexpr std::string_view kSlots[] = {"CLUSTER", "SLOTS"};
  const Reply r = node.connection->command(kSlots);
  if (r == nullptr) {
    last_error_ = node.connection->last_error();
    return false;
  }
  if (r->type != REDIS_REPLY_ARRAY) {
    last_error_ = "CLUSTER SLOTS on " + node.address + ": " + reply_text(r);
    return false;
  }
  std::array<std::int16_t, kClusterSlots> owners;
  owners.fill(kNoNode);
  const std::string asked_host = node.address.substr(0, node.address.rfind(':'));
  for (std::size_t i = 0; i < r->elements; ++i) {
    const redisReply* range = r->element[i];
    if (range->type != REDIS_REPLY_ARRAY || range->elements < 3) continue;
    const redisReply* primary = range->element[2];
    if (primary->type != REDIS_REPLY_ARRAY || primary->elements < 2) continue;
    // An empty host means "the address you reached me on" (cluster-preferred-endpoint-type).
    std::string host = primary->element[0]->str != nullptr
                           ? std::string(primary->element[0]->str, primary->element[0]->len)
                           : std::string();
    if (host.empty() || host == "?") host = asked_host;
    const std::int16_t owner = node_at(host, static_cast<int>(primary->element[1]->integer));
    const long long first = range->element[0]->integer;
    const long long last = range->element[1]->integer;
    for (long long s = first; s <= last && s < kClusterSlots; ++s)
      if (s >= 0) owners[static_cast<std::size_t>(s)] = owner;
  }
  for (std::int16_t owner : owners)
    if (owner == kNoNode) {
      last_error_ = "CLUSTER SLOTS on " + node.address + ": not every slot is served";
      return false;
    }
  owners_ = owners;
  for (Node& n : nodes_) n.replicas = -1;  // roles may have changed: ask again when needed
  return true;
}

std::string RedisClusterClient::owner_of(std::uint16_t slot) const {
  const std::int16_t owner = owners_.at(slot);
  return owner == kNoNode ? "" : nodes_[static_cast<std::size_t>(owner)].address;
}

Reply RedisClusterClient::command(std::uint16_t slot, std::span<const std::string_view> args) {
  std::vector<Reply> replies =
      pipeline(slot, {std::vector<std::string_view>(args.begin(), args.end())});
  return replies.empty() ? nullptr : std::move(replies.front());
}

std::vector<Reply> RedisClusterClient::pipeline(
    std::uint16_t slot, const std::vector<std::vector<std::string_view>>& commands,
    ReplicaWait wait) {
  if (commands.empty()) return {};
  const std::string wait_timeout = std::to_string(wait.timeout_ms);
  std::int16_t ask_node = kNoNode;  // set after ASK: the next try goes there, with ASKING
  int redirects = 0;
  for (;;) {
    if (owners_.at(slot) == kNoNode && !read_slot_map()) {
      up_.store(false, std::memory_order_relaxed);
      if (outage_ && outage_(last_error_)) continue;
      return {};
    }
    const std::int16_t target = ask_node != kNoNode ? ask_node : owners_.at(slot);
    Node& node = nodes_[static_cast<std::size_t>(target)];
    // The node is gone or hung: try again if the cluster has moved the slot elsewhere meanwhile
    // (a replica promoted) or the outage handler says to wait.
    const auto again_after_losing = [&](std::string why) {
      if (read_slot_map() && owners_.at(slot) != target) return true;
      last_error_ = std::move(why);
      up_.store(false, std::memory_order_relaxed);
      return outage_ && outage_(last_error_);
    };
    const int known = wait.replicas > 0 ? replicas_of(node) : 0;
    if (known < 0) {
      if (again_after_losing(node.address +
                             ": cannot learn its replicas (CLUSTER NODES) for WAIT: " +
                             node.connection->last_error()))
        continue;
      return {};
    }
    const int wanted = std::min(wait.replicas, known);
    const std::string wait_replicas = std::to_string(wanted);
    std::vector<std::vector<std::string_view>> sent;
    sent.reserve(commands.size() * 2 + 1);
    for (const auto& c : commands) {
      if (ask_node != kNoNode) sent.push_back({"ASKING"});
      sent.push_back(c);
    }
    if (wanted > 0) sent.push_back({"WAIT", wait_replicas, wait_timeout});
    std::vector<Reply> replies = node.connection->pipeline(sent);
    ask_node = kNoNode;
    if (replies.empty()) {
      if (again_after_losing(node.address + ": " + node.connection->last_error())) continue;
      return {};
    }
    up_.store(true, std::memory_order_relaxed);
    // Redirects come for the slot, so for every command of the pipeline alike: the first
    // command's reply says whether any ran.
    const Reply& first = replies[sent.front().front() == "ASKING" ? 1 : 0];
    if (is_error(first, "MOVED ") || is_error(first, "ASK ") || is_error(first, "TRYAGAIN")) {
      if (++redirects > kMaxRedirects) {
        last_error_ = "too many redirects for slot " + std::to_string(slot) +
                      ", the last: " + reply_text(first);
        return {};
      }
      ++redirects_;
      std::string host;
      int port = 0;
      if (is_error(first, "TRYAGAIN")) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      } else if (!redirect_target(first, host, port)) {
        last_error_ = "unreadable redirect: " + reply_text(first);
        return {};
      } else if (is_error(first, "ASK ")) {
        ask_node = node_at(host, port);
      } else {
        (void)read_slot_map();  // one slot moved: others may have too
        // The node that answered MOVED knows better than a map that may lag behind it.
        owners_.at(slot) = node_at(host, port);
      }
      continue;
    }
    if (is_error(first, "CLUSTERDOWN")) {
      last_error_ = node.address + ": " + reply_text(first);
      (void)read_slot_map();
      if (outage_ && outage_(last_error_)) continue;
      return {};
    }
    std::vector<Reply> out;
    out.reserve(commands.size());
    for (std::size_t i = 0; i < sent.size(); ++i) {
      if (sent[i].front() == "ASKING" || (wanted > 0 && i + 1 == sent.size())) continue;
      out.push_back(std::move(replies[i]));
    }
    if (wanted > 0 && !replicated(node, std::move(replies.back()), wanted, wait)) return {};
    return out;
  }
}

std::vector<std::vector<Reply>> RedisClusterClient::pipeline_slots(
    const std::vector<SlotBatch>& batches, ReplicaWait wait) {
  std::vector<std::vector<Reply>> out(batches.size());
  std::vector<bool> alone(batches.size(), false);  // to go through pipeline() on its own
  struct Primary {
    std::int16_t node = kNoNode;
    std::vector<std::size_t> batches;  // indices into `batches`, in order
    int wanted = 0;                    // replicas WAIT asks for
    std::string wanted_text;
    std::size_t sent = 0;  // commands written, WAIT included
    bool written = false;
    bool received = false;
  };
  std::vector<Primary> primaries;
  const auto unmapped = [&](const SlotBatch& b) { return owners_.at(b.slot) == kNoNode; };
  if (std::any_of(batches.begin(), batches.end(), unmapped)) (void)read_slot_map();
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (batches[i].commands.empty()) continue;
    const std::int16_t owner = owners_.at(batches[i].slot);
    if (owner == kNoNode) {
      alone[i] = true;
      continue;
    }
    auto p = std::find_if(primaries.begin(), primaries.end(),
                          [&](const Primary& q) { return q.node == owner; });
    if (p == primaries.end()) {
      p = primaries.emplace(primaries.end());
      p->node = owner;
    }
    p->batches.push_back(i);
  }
  const auto send_alone = [&](const Primary& p) {
    for (std::size_t i : p.batches) alone[i] = true;
  };
  const std::string wait_timeout = std::to_string(wait.timeout_ms);
  for (Primary& p : primaries) {
    Node& node = nodes_[static_cast<std::size_t>(p.node)];
    const int known = wait.replicas > 0 ? replicas_of(node) : 0;
    if (known < 0) {
      send_alone(p);
      continue;
    }
    p.wanted = std::min(wait.replicas, known);
    p.wanted_text = std::to_string(p.wanted);
    std::vector<std::vector<std::string_view>> sent;
    for (std::size_t i : p.batches)
      sent.insert(sent.end(), batches[i].commands.begin(), batches[i].commands.end());
    if (p.wanted > 0) sent.push_back({"WAIT", p.wanted_text, wait_timeout});
    p.sent = sent.size();
    p.written = node.connection->send(sent);
    if (!p.written) send_alone(p);
  }
  // Replies written for but never read (an exception on the way) would be read later as the
  // answers to other commands: such connections are dropped instead.
  struct DropUnread {
    std::vector<Primary>& primaries;
    std::deque<Node>& nodes;
    ~DropUnread() {
      for (const Primary& p : primaries)
        if (p.written && !p.received)
          nodes[static_cast<std::size_t>(p.node)].connection->abandon(
              "a pipeline's replies were not read");
    }
  } drop_unread{primaries, nodes_};
  bool moved = false;
  for (Primary& p : primaries) {
    if (!p.written) continue;
    Node& node = nodes_[static_cast<std::size_t>(p.node)];
    std::vector<Reply> replies = node.connection->receive(p.sent);
    p.received = true;
    if (replies.empty()) {
      send_alone(p);
      continue;
    }
    up_.store(true, std::memory_order_relaxed);
    std::size_t at = 0;
    bool ran = false;
    for (std::size_t i : p.batches) {
      const std::size_t count = batches[i].commands.size();
      // Redirects and CLUSTERDOWN come for the slot, so for every command of the batch alike.
      const Reply& first = replies[at];
      if (is_error(first, "MOVED ") || is_error(first, "ASK ") || is_error(first, "TRYAGAIN") ||
          is_error(first, "CLUSTERDOWN")) {
        alone[i] = true;
        moved = moved || is_error(first, "MOVED ");
        if (!is_error(first, "CLUSTERDOWN")) ++redirects_;
      } else {
        ran = true;
        for (std::size_t k = 0; k < count; ++k) out[i].push_back(std::move(replies[at + k]));
      }
      at += count;
    }
    if (p.wanted > 0 && ran && !replicated(node, std::move(replies.back()), p.wanted, wait))
      for (std::size_t i : p.batches) out[i].clear();
  }
  if (moved) (void)read_slot_map();  // else each moved batch would meet its MOVED again
  for (std::size_t i = 0; i < batches.size(); ++i)
    if (alone[i]) out[i] = pipeline(batches[i].slot, batches[i].commands, wait);
  return out;
}

bool RedisClusterClient::replicated(Node& node, Reply acked, int wanted, ReplicaWait wait) {
  const std::string timeout = std::to_string(wait.timeout_ms);
  for (;;) {
    if (acked != nullptr && acked->type == REDIS_REPLY_INTEGER && acked->integer >= wanted)
      return true;
    // Too few so far: a replica still synchronising, hung, or gone. The writes have run; only
    // their copies are missing, so the commands are not sent again: WAIT is, as long as the
    // outage handler says to wait (the daemon's fail-closed pause), for the replicas the
    // primary has now (none left: its AOF holds the writes, see the file comment).
    last_error_ =
        node.address + ": WAIT saw " +
        (acked != nullptr && acked->type == REDIS_REPLY_INTEGER ? std::to_string(acked->integer)
                                                                : reply_text(acked)) +
        " of " + std::to_string(wanted) + " replicas within " + timeout +
        " ms: the writes may be lost with the primary";
    node.replicas = -1;
    const int known = replicas_of(node);
    if (known == 0) return true;  // the cluster counts its replica failed: its AOF holds them
    if (known > 0) wanted = std::min(wait.replicas, known);
    if (!outage_ || !outage_(last_error_)) return false;
    const std::string replicas = std::to_string(wanted);
    const std::array<std::string_view, 3> again{"WAIT", replicas, timeout};
    acked = node.connection->command(again);
    if (acked == nullptr) {  // the primary is gone: whether its replica has the writes is unknown
      last_error_ = node.address + ": " + node.connection->last_error();
      return false;
    }
  }
}

int RedisClusterClient::replicas_of(Node& node) {
  const bool stale =
      node.replicas < 0 ||
      (node.replicas == 0 && Clock::now() - node.replicas_asked > std::chrono::seconds(1));
  if (!stale) return node.replicas;
  constexpr std::string_view kNodes[] = {"CLUSTER", "NODES"};
  const Reply r = node.connection->command(kNodes);
  node.replicas_asked = Clock::now();
  node.replicas = -1;
  if (r == nullptr || r->type != REDIS_REPLY_STRING) return -1;
  // One line per node: <id> <address> <flags> <primary id or -> ...; flags comma-separated.
  const std::string_view text(r->str, r->len);
  const auto fields_of = [](std::string_view line) {
    std::vector<std::string_view> fields;
    for (std::size_t at = 0; at < line.size() && fields.size() < 4;) {
      const std::size_t end = std::min(line.find(' ', at), line.size());
      fields.push_back(line.substr(at, end - at));
      at = end + 1;
    }
    return fields;
  };
  const auto has_flag = [](std::string_view flags, std::string_view flag) {
    for (std::size_t at = 0; at <= flags.size();) {
      const std::size_t end = std::min(flags.find(',', at), flags.size());
      if (flags.substr(at, end - at) == flag) return true;
      at = end + 1;
    }
    return false;
  };
  std::vector<std::vector<std::string_view>> lines;
  std::string_view my_id;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::vector<std::string_view> fields = fields_of(text.substr(at, end - at));
    at = end + 1;
    if (fields.size() < 4) continue;
    if (has_flag(fields[2], "myself")) my_id = fields[0];
    lines.push_back(std::move(fields));
  }
  if (my_id.empty()) return -1;
  int count = 0;
  for (const auto& fields : lines)
    if (fields[3] == my_id && !has_flag(fields[2], "fail")) ++count;  // "fail?" still counts
  node.replicas = count;
  return count;
}

bool RedisClusterClient::for_each_primary(const std::function<bool(RedisConnection&)>& fn) {
  std::vector<bool> visited(nodes_.size(), false);
  for (std::int16_t owner : owners_) {
    if (owner == kNoNode || visited[static_cast<std::size_t>(owner)]) continue;
    visited[static_cast<std::size_t>(owner)] = true;
    if (!fn(*nodes_[static_cast<std::size_t>(owner)].connection)) return false;
  }
  return true;
}

std::uint64_t RedisClusterClient::round_trips() const noexcept {
  std::uint64_t n = 0;
  for (const Node& node : nodes_) n += node.connection->round_trips();
  return n;
}

std::uint64_t RedisClusterClient::connects() const noexcept {
  std::uint64_t n = 0;
  for (const Node& node : nodes_) n += node.connection->connects();
  return n;
}

}  // namespace dsekp::edge::redis
