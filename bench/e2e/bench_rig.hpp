// The set-up both end-to-end measurements share, built from the experiment library's parts
// (experiment/): a working folder, a fresh registry with the devices and their broker accounts, a
// private Mosquitto on a free loopback port, `dsekp edge` (waited for through its ready file) and
// `dsekp device` fleets as child processes. Every child is stopped when the rig goes (devices
// first, broker last) and dies with us if we are killed (the library's parent-death signal).
//
// Several edges (`dsekp bench scale --edges N --store redis`): the rig can also start a private
// redis-server (AOF on, no RDB snapshots, its files in <dir>/redis) and N edges that share it
// as their session store, in one MQTT 5 shared subscription group, each with its own client id,
// state database and logs folder (logs/edge-K when there are several), as docs/SCALING.md
// "Running several edges" prescribes.
//
// A clustered tier (`dsekp bench scale --cluster`, docs/SCALING.md "Per-node costs"): instead
// of Mosquitto and one redis-server, three RabbitMQ nodes (MQTT plugin for the devices, one
// quorum queue the edges consume over AMQP) and a Redis Cluster of three primaries with a replica
// each (engines/), the edges on `--amqp` and `--store redis+cluster://`, and one device fleet per
// broker node (anonymous MQTT: the private nodes have no device accounts).
//
// Descriptors: Mosquitto needs one per connection; its soft RLIMIT_NOFILE is whatever it
// inherits, so the rig raises its own soft limit to the hard limit first (children inherit it).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engines/rabbitmq_cluster.hpp"
#include "engines/redis_cluster_nodes.hpp"
#include "experiment/commands.hpp"
#include "experiment/net.hpp"
#include "experiment/process.hpp"

namespace dsekp::bench::e2e {

struct RigOptions {
  std::filesystem::path dir;                    // working folder: created if missing, must be empty
  std::string dsekp_exe;                        // empty: this program (/proc/self/exe)
  std::string mosquitto;                        // empty: /usr/sbin, /usr/local/sbin or PATH
  std::function<void(const std::string&)> say;  // progress lines (may be empty)
};

/// How the edges run: one edge on its own SQLite state (the default), or `count` edges sharing
/// the rig's Redis (start_redis() first) as their session store.
struct EdgeGroup {
  std::size_t count = 1;
  bool redis_store = false;         // --store redis://127.0.0.1:PORT/bench
  std::string shared_group;         // --shared-group (empty: plain subscriptions)
  std::uint32_t replay_window = 0;  // --replay-window (0: the edge's default)
  bool metrics = false;             // --metrics on a free loopback port (see edge_metrics_ports)
  bool cluster = false;  // --amqp on the rig's RabbitMQ nodes, --store redis+cluster:// (see
                         // start_cluster); edge K starts at broker node K - 1
  std::vector<std::string> extra_args;  // appended to every edge's command line
};

/// How one `dsekp device` run ended.
struct FleetRun {
  std::string command;  // one line per fleet
  int exit_code = 0;    // shell convention: 128 + signal when killed
  std::string exit_text;
  nlohmann::json summary;  // its --summary-json (null if unreadable); several fleets' counters
                           // summed (see finish_fleet)
  double wall_s = 0;
  std::uint64_t edge_rows = 0;  // rows the edge had logged for the mode when we stopped waiting
  std::vector<std::string> problems;
};

class BenchRig {
 public:
  explicit BenchRig(RigOptions options);
  ~BenchRig();  // stops every child still running
  BenchRig(const BenchRig&) = delete;
  BenchRig& operator=(const BenchRig&) = delete;

  /// Registers `devices` fleet devices ("dev-00001", ...) and `probe_identities` more
  /// ("probe-001", ...) with broker accounts. Throws std::runtime_error on a registry error.
  void provision(std::size_t devices, std::size_t probe_identities);
  /// Starts the private Mosquitto (experiment::start_mosquitto; the config has TCP_NODELAY).
  void start_broker();
  /// Starts a private redis-server on a free loopback port (AOF on, `--save ''`, its files in
  /// dir()/redis) and waits until it accepts connections. Throws with the end of its log if it
  /// does not come up.
  void start_redis();
  /// Starts the clustered tier instead of start_broker() and start_redis(): `broker_nodes`
  /// RabbitMQ nodes in one cluster and a Redis Cluster of `redis_primaries` primaries with one
  /// replica each; returns once both serve. Throws with the engines' logs otherwise.
  void start_cluster(int broker_nodes, int redis_primaries);
  /// Starts `dsekp edge` on the broker with its logs in logs_dir() and waits for its ready file.
  /// `extra_args` are appended to the edge's command line (e.g. "--init-burst", "0").
  void start_edge(const std::vector<std::string>& extra_args);
  /// Starts `group.count` edges (edge K's logs in edge_logs_dir(K)) and waits for every ready
  /// file. Only one group at a time.
  void start_edges(const EdgeGroup& group);
  /// Stops the edges (SIGTERM; each finishes the frame in hand and flushes its logs).
  void stop_edge();
  /// Stops everything still running, last started first.
  void stop_all();

  /// Starts `dsekp device` with `c` (broker, credentials, summary filled in here; its client
  /// logs go to `c.logs_dir`, or to logs_dir() when that is empty) plus `extra_args`; returns at
  /// once. Only one fleet at a time.
  void start_fleet(experiment::DeviceCommand c, const std::vector<std::string>& extra_args);
  /// The same for several `dsekp device` processes at once (one per broker node of a cluster):
  /// each command's broker and credentials are used as given when set.
  void start_fleets(std::vector<experiment::DeviceCommand> commands,
                    const std::vector<std::string>& extra_args);
  /// Whether a fleet process is still running.
  [[nodiscard]] bool fleet_running();
  /// Waits (at most `limit`) for the fleets to end, then for the edges to log every frame the
  /// brokers acknowledged (until they log nothing new for `settle_quiet`). Throws if a device
  /// refused its arguments (exit code 2) or ran past `limit`; other failures are listed in
  /// FleetRun::problems. Several fleets: the summary's counters (its whole numbers, nested ones
  /// too) are the sums, its times and exit code the largest (null if one fleet's is), its flags
  /// or-ed, the rest the first fleet's; wall_s is the longest.
  FleetRun finish_fleet(std::chrono::seconds limit,
                        std::chrono::seconds settle_quiet = std::chrono::seconds(10));

  /// Data rows the edges have logged so far for `mode` ("psk" or "dsekp"), summed.
  std::uint64_t edge_rows(const std::string& mode);
  /// The same per edge, in start order.
  std::vector<std::uint64_t> edge_rows_each(const std::string& mode);
  /// Sleeps `step`, throwing experiment::Interrupted on a signal and std::runtime_error (with the
  /// end of its log) if the broker or the edge has died.
  void tick(std::chrono::milliseconds step = std::chrono::milliseconds(50));

  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }
  [[nodiscard]] std::filesystem::path logs_dir() const { return dir_ / "logs"; }
  [[nodiscard]] const experiment::HostPort& broker() const noexcept { return broker_; }
  [[nodiscard]] const std::string& credentials() const noexcept { return credentials_; }
  [[nodiscard]] const std::string& probe_credentials() const noexcept { return probe_credentials_; }
  [[nodiscard]] pid_t broker_pid() const;
  [[nodiscard]] pid_t edge_pid() const;  // the first edge's
  [[nodiscard]] std::vector<pid_t> edge_pids() const;
  /// Edge K's (1-based) logs folder: logs_dir() when one edge runs, else logs_dir()/edge-K.
  [[nodiscard]] std::filesystem::path edge_logs_dir(std::size_t k) const;
  [[nodiscard]] std::size_t edge_count() const noexcept { return edge_children_.size(); }
  /// The edges' metrics ports (EdgeGroup::metrics), in start order; empty otherwise.
  [[nodiscard]] const std::vector<int>& edge_metrics_ports() const noexcept {
    return metrics_ports_;
  }
  [[nodiscard]] pid_t redis_pid() const;
  /// The clustered tier (start_cluster): each broker node's Erlang VM and each Redis node's
  /// process, and the Redis nodes' ports, in node order; empty without it.
  [[nodiscard]] std::vector<pid_t> broker_node_pids() const;
  [[nodiscard]] std::vector<pid_t> redis_node_pids() const;
  [[nodiscard]] std::vector<int> redis_node_ports() const;
  /// "127.0.0.1:PORT" of broker node `node`'s MQTT listener (start_cluster).
  [[nodiscard]] std::string cluster_mqtt(int node) const;
  /// Whether Redis node `node` is a primary now (INFO replication).
  [[nodiscard]] bool redis_node_is_primary(int node) const;
  [[nodiscard]] std::uint16_t redis_port() const noexcept { return redis_port_; }
  [[nodiscard]] const std::string& mosquitto_version() const noexcept { return mosquitto_version_; }
  /// Every child command line so far, in order (for the report).
  [[nodiscard]] const std::vector<std::string>& commands() const noexcept { return commands_; }
  /// The soft descriptor limit after raising it.
  [[nodiscard]] std::uint64_t nofile_limit() const noexcept { return nofile_; }

 private:
  void say(const std::string& line) const {
    if (options_.say) options_.say(line);
  }
  [[nodiscard]] std::string process_log(const std::string& name) const;

  RigOptions options_;
  std::filesystem::path dir_;
  std::string dsekp_;
  std::uint64_t nofile_ = 0;
  experiment::ChildSet children_;
  experiment::Child* broker_child_ = nullptr;
  std::vector<experiment::Child*> edge_children_;
  std::vector<std::filesystem::path> edge_logs_;
  std::vector<int> metrics_ports_;
  experiment::Child* redis_child_ = nullptr;
  std::uint16_t redis_port_ = 0;
  struct Fleet {
    experiment::Child* child = nullptr;
    experiment::DeviceCommand command;
    std::string command_text;
  };
  std::vector<Fleet> fleets_;
  std::chrono::steady_clock::time_point fleet_started_;
  std::uint64_t rows_before_fleet_ = 0;  // the mode's server log rows when the fleets started
  std::unique_ptr<engines::RabbitMqCluster> rabbitmq_;
  std::unique_ptr<engines::RedisClusterNodes> redis_cluster_;
  experiment::HostPort broker_;
  std::string registry_db_;
  std::string credentials_;
  std::string probe_credentials_;
  std::string password_file_;
  std::string acl_file_;
  std::string mosquitto_version_;
  std::vector<std::string> commands_;
  int edges_started_ = 0;
  int fleets_started_ = 0;
};

/// The working folder of one measurement: the one given, or a fresh temporary folder
/// (/tmp/PREFIX-XXXXXX) that release() removes after a successful run unless asked to keep it.
class WorkDir {
 public:
  /// Throws std::invalid_argument if `requested` exists and is not an empty folder,
  /// std::runtime_error if no temporary folder can be made.
  WorkDir(const std::string& requested, const std::string& prefix, bool keep);
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// Removes a temporary folder (when not kept); true if removed.
  bool release();

 private:
  std::filesystem::path path_;
  bool temporary_ = false;
  bool keep_ = false;
};

/// This program's path (/proc/self/exe resolved), for starting its own subcommands.
std::string self_executable();

}  // namespace dsekp::bench::e2e
