// Commands to a Redis Cluster, each sent to the primary that serves its key's hash slot
// (redis_key_slot.hpp). Debian's hiredis (0.14) has no cluster support, so the routing is here:
//
// - The slot map comes from CLUSTER SLOTS, asked of the nodes this client knows (the map's, then
//   the seeds) until one answers; one RedisConnection per node, made when first needed.
// - MOVED (the slot has a new owner: a resharding or a replica promoted) updates the map for that
//   slot, re-reads the whole map, and sends the commands again to the new owner. ASK (the slot is
//   being migrated and the key is already on the target) sends them once to the target, each
//   after ASKING, and leaves the map alone. TRYAGAIN (a multi-key command during a migration)
//   waits a moment and sends them again. At most kMaxRedirects of these per call.
// - A node that cannot be reached (killed, hung past the command timeout): the map is re-read
//   from the other nodes; if it names another owner for the slot (the cluster has promoted a
//   replica) the commands go there, else the outage handler decides, as for one connection
//   (redis_connection.hpp): wait and try again (the daemon's fail-closed pause) or fail.
//   CLUSTERDOWN (the cluster has not settled after a node's loss) is treated the same way.
//
// A command whose reply was lost may have run; sending it again must be harmless (the commit
// script's generation checks make a second run of an applied unit a generation_conflict).
//
// Durability: a reply from a primary means the write is in its memory (and its AOF), not that
// any replica has it; a primary killed at that moment takes the write with it when its replica
// is promoted. pipeline() can append WAIT, which returns once that many replicas have
// acknowledged every earlier write of the connection, or at the timeout with fewer. It waits for
// the primary's replicas that the cluster has not marked failed (its CLUSTER NODES, asked after
// each map read), connected or not, up to the number asked: a write every such replica has
// survives the primary's loss (only those can be promoted), and a primary with none (a promoted
// one whose old primary the cluster counts as failed) cannot be replaced, so its own AOF holds
// the write. A count that cannot be had is an outage, never "none". While a primary has no
// replica it is asked again at most once a second, to notice one that comes back.
// A WAIT that sees too few replicas (one still synchronising after a restart, or hung) is sent
// again while the outage handler says to wait; without one, or once it says stop, the call fails
// (its writes ran: like a lost reply).
//
// Not thread-safe (one thread uses it, as the SessionStore it serves).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edge/store/redis/redis_connection.hpp"
#include "edge/store/redis/redis_key_slot.hpp"

namespace dsekp::edge::redis {

/// What WAIT must see after a pipeline's writes: `replicas` replicas acknowledging within
/// `timeout_ms`; replicas 0: no WAIT.
struct ReplicaWait {
  int replicas = 0;
  int timeout_ms = 100;
};

/// Commands whose keys are all in `slot`.
struct SlotBatch {
  std::uint16_t slot = 0;
  std::vector<std::vector<std::string_view>> commands;
};

class RedisClusterClient {
 public:
  static constexpr int kMaxRedirects = 5;

  /// `seeds`: nodes to ask for the slot map, each with the login and timeouts every node's
  /// connection uses (those of the first seed).
  explicit RedisClusterClient(std::vector<RedisEndpoint> seeds);
  RedisClusterClient(const RedisClusterClient&) = delete;
  RedisClusterClient& operator=(const RedisClusterClient&) = delete;
  ~RedisClusterClient();

  /// Reads the slot map. false (and last_error()) if no seed answers or the cluster does not
  /// serve every slot.
  bool connect();

  /// `args` (whose keys are all in `slot`) to that slot's primary; the reply, which may be an
  /// error reply other than a redirect. Null (and last_error()) if no owner of the slot could
  /// be reached.
  Reply command(std::uint16_t slot, std::span<const std::string_view> args);

  /// `commands` (keys all in `slot`) to its primary in one round trip, followed by WAIT for its
  /// replicas (up to `wait.replicas`, see the file comment) when that is > 0: their replies in
  /// order (WAIT's not among them). Empty (and last_error()) if there are no commands, the
  /// primary could not be reached, or WAIT saw too few replicas (the writes ran, but may be
  /// lost with the primary).
  std::vector<Reply> pipeline(std::uint16_t slot,
                              const std::vector<std::vector<std::string_view>>& commands,
                              ReplicaWait wait = {});

  /// Each batch (keys all in its slot; slots may repeat) to its slot's primary as pipeline()
  /// sends it, but every primary's batches in one write with one WAIT after them, and every
  /// primary written to before any reply is read: the primaries work at once, so the call
  /// takes about one round trip however many slots and primaries it touches. The replies of
  /// each batch in order. A batch that is redirected, whose primary cannot be reached, is hung
  /// or answers CLUSTERDOWN is then sent again on its own through pipeline() (redirects, map
  /// reads and the outage handler as there; its commands may have run once already, as after
  /// any lost reply). Empty replies for a batch that failed (last_error() says why); the
  /// others' stand: some batches can succeed where others fail.
  std::vector<std::vector<Reply>> pipeline_slots(const std::vector<SlotBatch>& batches,
                                                 ReplicaWait wait = {});

  /// `fn` on the connection of each primary in the current map; stops at the first false.
  bool for_each_primary(const std::function<bool(RedisConnection&)>& fn);

  /// See RedisConnection::set_outage_handler: asked after a node could not be reached and the
  /// slot map named no other owner, or after CLUSTERDOWN.
  void set_outage_handler(OutageHandler handler) { outage_ = std::move(handler); }
  /// The slot's primary in the current map ("host:port"), "" if unknown.
  [[nodiscard]] std::string owner_of(std::uint16_t slot) const;
  /// Whether the last call reached the cluster. Any thread may read it.
  [[nodiscard]] bool up() const noexcept { return up_.load(std::memory_order_relaxed); }
  /// Network round trips so far, over all nodes (map reads included).
  [[nodiscard]] std::uint64_t round_trips() const noexcept;
  /// Successful connects so far, over all nodes.
  [[nodiscard]] std::uint64_t connects() const noexcept;
  /// Slot map reads so far (1 after connect()).
  [[nodiscard]] std::uint64_t map_reads() const noexcept { return map_reads_; }
  /// Redirects (MOVED, ASK, TRYAGAIN) followed so far.
  [[nodiscard]] std::uint64_t redirects() const noexcept { return redirects_; }
  [[nodiscard]] const std::string& last_error() const noexcept { return last_error_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Node {
    std::string address;  // host:port
    std::unique_ptr<RedisConnection> connection;
    int replicas = -1;  // its replicas not marked failed; -1: not known since the last map read
    Clock::time_point replicas_asked{};
  };
  static constexpr std::int16_t kNoNode = -1;

  /// The node at `address`, made if new; its index in nodes_.
  std::int16_t node_at(const std::string& host, int port);
  /// Whether `acked` (WAIT's reply) shows `wanted` replicas, else, while the outage handler
  /// says to wait, whether a WAIT sent again does. last_error() says why not.
  bool replicated(Node& node, Reply acked, int wanted, ReplicaWait wait);
  /// `node`'s replicas not marked failed (see the file comment); -1 if it cannot be asked.
  int replicas_of(Node& node);
  /// Re-reads the slot map from the known nodes. false if none answered with a full map.
  bool read_slot_map();
  bool read_slot_map_from(Node& node);

  std::vector<RedisEndpoint> seeds_;
  std::deque<Node> nodes_;  // a deque: references stay valid as nodes are added
  std::array<std::int16_t, kClusterSlots> owners_{};  // index into nodes_, kNoNode if unknown
  OutageHandler outage_;
  std::uint64_t map_reads_ = 0;
  std::uint64_t redirects_ = 0;
  std::string last_error_;
  std::atomic<bool> up_{false};
};

}  // namespace dsekp::edge::redis
