// The shared set-up of the end-to-end measurements (see bench_rig.hpp).
#include "bench_rig.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "engines/executables.hpp"
#include "experiment/broker.hpp"
#include "experiment/file_watch.hpp"
#include "experiment/interrupt.hpp"
#include "experiment/provision.hpp"

namespace dsekp::bench::e2e {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kStopGrace{5000};
constexpr std::chrono::seconds kEdgeReadyTimeout{30};

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the soft limit in force.
std::uint64_t raise_nofile() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return nullptr;
  }
}

std::string indent(const std::string& text) {
  std::string out = "    ";
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size()) out += "    ";
  }
  return out;
}

std::string ended_message(experiment::Child& child, const experiment::ExitStatus& status) {
  return child.name() + " ended unexpectedly (" + status.describe() + "); the end of its log (" +
         child.spec().output_file + "):\n" +
         indent(experiment::file_tail(child.spec().output_file));
}

}  // namespace

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

WorkDir::WorkDir(const std::string& requested, const std::string& prefix, bool keep) : keep_(keep) {
  if (!requested.empty()) {
    path_ = requested;
    std::error_code ec;
    // Checked before anything starts (the rig checks again when it creates the folder).
    if (fs::exists(path_, ec) && !(fs::is_directory(path_, ec) && fs::is_empty(path_, ec)))
      throw std::invalid_argument("--dir " + requested +
                                  " is not an empty folder: give a new or empty one");
    return;
  }
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot create a temporary folder " + pattern + ": " +
                             std::strerror(errno));
  path_ = pattern;
  temporary_ = true;
}

bool WorkDir::release() {
  if (!temporary_ || keep_) return false;
  std::error_code ec;
  fs::remove_all(path_, ec);
  return !ec;
}

BenchRig::BenchRig(RigOptions options) : options_(std::move(options)), dir_(options_.dir) {
  dsekp_ = options_.dsekp_exe.empty() ? self_executable() : options_.dsekp_exe;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("cannot create " + dir_.string() + ": " + ec.message());
  if (!fs::is_empty(dir_, ec))
    throw std::runtime_error(dir_.string() + " is not empty: give a new or empty folder");
  dir_ = fs::absolute(dir_);
  for (const char* sub : {"logs", "processes", "secrets"}) fs::create_directories(dir_ / sub);
  nofile_ = raise_nofile();
}

BenchRig::~BenchRig() {
  stop_all();
}

std::string BenchRig::process_log(const std::string& name) const {
  return (dir_ / "processes" / name).string();
}

void BenchRig::provision(std::size_t devices, std::size_t probe_identities) {
  experiment::ProvisionRequest request;
  request.secrets_dir = (dir_ / "secrets").string();
  request.main_devices = experiment::device_ids("dev-", devices);
  if (probe_identities > 0)
    request.trial_devices = experiment::device_ids("probe-", probe_identities);
  request.broker_accounts = true;
  const experiment::Provisioned p = experiment::provision(request);
  registry_db_ = p.registry_db;
  credentials_ = p.main_credentials;
  probe_credentials_ = p.trial_credentials;
  password_file_ = p.password_file;
  acl_file_ = p.acl_file;
}

void BenchRig::start_broker() {
  const std::string mosquitto =
      options_.mosquitto.empty() ? experiment::find_mosquitto() : options_.mosquitto;
  mosquitto_version_ =
      experiment::mosquitto_version(mosquitto, process_log("mosquitto-version.txt"));
  experiment::MosquittoSettings settings;
  settings.password_file = password_file_;
  settings.acl_file = acl_file_;
  settings.log_file = process_log("mosquitto.log");
  settings.user = experiment::current_user_name();
  const auto started =
      experiment::start_mosquitto(children_, mosquitto, settings,
                                  (dir_ / "mosquitto.conf").string(), process_log("mosquitto.out"));
  broker_child_ = started.child;
  broker_ = started.address;
  commands_.push_back(experiment::shell_join({mosquitto, "-c", started.conf_file}));
  say("broker: " + mosquitto_version_ + " on " + broker_.str() + " (pid " +
      std::to_string(broker_child_->pid()) + ", descriptor limit " + std::to_string(nofile_) + ")");
}

void BenchRig::start_redis() {
  if (redis_child_ != nullptr) throw std::logic_error("Redis is already running");
  const std::string server = engines::redis_server_path();
  if (server.empty())
    throw std::runtime_error(
        "no redis-server found (/usr/bin, /usr/local/bin, /usr/sbin, PATH): install the "
        "redis-server package (make deps)");
  const fs::path redis_dir = dir_ / "redis";
  fs::create_directories(redis_dir);
  // The port was free a moment ago; another process may take it first: retry a few times.
  std::string last_failure;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const std::uint16_t port = experiment::free_loopback_port();
    const std::vector<std::string> argv = {
        server, "--bind",       "127.0.0.1", "--port", std::to_string(port), "--save",
        "",     "--appendonly", "yes",       "--dir",  redis_dir.string()};
    experiment::Child& child = children_.start(experiment::ChildSpec{
        "redis-server", argv, process_log("redis-" + std::to_string(attempt) + ".log"), {}});
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    bool up = false;
    while (!up && Clock::now() < deadline && child.running()) {
      up = experiment::accepts_tcp({"127.0.0.1", port});
      if (!up) {
        experiment::throw_if_interrupted();
        std::this_thread::sleep_for(milliseconds(50));
      }
    }
    if (up) {
      redis_child_ = &child;
      redis_port_ = port;
      commands_.push_back(experiment::shell_join(argv));
      say("redis: " + server + " on 127.0.0.1:" + std::to_string(port) + " (pid " +
          std::to_string(child.pid()) + ", AOF in " + redis_dir.string() + ")");
      return;
    }
    last_failure = experiment::file_tail(child.spec().output_file);
    (void)children_.stop(child, kStopGrace);
  }
  throw std::runtime_error("redis-server did not start (3 attempts); the end of its log:\n" +
                           indent(last_failure));
}

void BenchRig::start_edge(const std::vector<std::string>& extra_args) {
  EdgeGroup group;
  group.extra_args = extra_args;
  start_edges(group);
}

fs::path BenchRig::edge_logs_dir(std::size_t k) const {
  if (k >= 1 && k <= edge_logs_.size()) return edge_logs_[k - 1];
  return logs_dir();
}

void BenchRig::start_edges(const EdgeGroup& group) {
  if (!edge_children_.empty()) throw std::logic_error("the edges are already running");
  if (group.count < 1) throw std::logic_error("start_edges: no edge");
  if (group.redis_store && redis_child_ == nullptr)
    throw std::logic_error("start_edges: the Redis store needs start_redis() first");
  std::vector<fs::path> ready_files;
  for (std::size_t k = 1; k <= group.count; ++k) {
    const int n = ++edges_started_;
    const std::string tag = "edge-" + std::to_string(n);
    const fs::path ready = dir_ / "processes" / (tag + ".ready");
    const fs::path logs =
        group.count == 1 ? logs_dir() : logs_dir() / ("edge-" + std::to_string(k));
    fs::create_directories(logs);
    experiment::EdgeCommand c;
    c.broker = broker_.str();
    c.registry_db = registry_db_;
    c.state_db = (dir_ / "secrets" / ("edge-state-" + std::to_string(n) + ".db")).string();
    c.logs_dir = logs.string();
    c.ready_file = ready.string();
    // The edge keeps a persistent MQTT session: a fresh id per bench run and edge (the broker
    // is private to the run, so "edge-K" is fresh too).
    c.client_id = group.redis_store || group.cluster
                      ? "edge-" + std::to_string(k)
                      : "dsekp-bench-" + std::to_string(::getpid()) + "-" + std::to_string(n);
    auto argv = experiment::edge_argv(dsekp_, c);
    if (group.metrics) {
      // edge_argv says "--metrics off": replace the value rather than giving the option twice.
      const int port = experiment::free_loopback_port();
      const auto at = std::find(argv.begin(), argv.end(), "--metrics");
      if (at == argv.end() || at + 1 == argv.end()) {
        argv.insert(argv.end(), {"--metrics", "127.0.0.1:" + std::to_string(port)});
      } else {
        *(at + 1) = "127.0.0.1:" + std::to_string(port);
      }
      metrics_ports_.push_back(port);
    }
    if (group.redis_store)
      argv.insert(argv.end(),
                  {"--store", "redis://127.0.0.1:" + std::to_string(redis_port_) + "/bench"});
    if (group.cluster) {
      // Not the Mosquitto broker: the RabbitMQ nodes over AMQP (the guest login, allowed on
      // loopback), edge K starting at node K - 1, one quorum queue for all.
      const auto broker = std::find(argv.begin(), argv.end(), "--broker");
      if (broker != argv.end() && broker + 1 != argv.end()) argv.erase(broker, broker + 2);
      argv.insert(argv.end(),
                  {"--amqp", rabbitmq_->amqp_nodes(static_cast<int>(k - 1) % rabbitmq_->size()),
                   "--username", "guest", "--password", "guest", "--store",
                   "redis+cluster://" + redis_cluster_->seeds() + "/bench"});
    }
    if (!group.shared_group.empty())
      argv.insert(argv.end(), {"--shared-group", group.shared_group});
    if (group.replay_window > 0)
      argv.insert(argv.end(), {"--replay-window", std::to_string(group.replay_window)});
    argv.insert(argv.end(), group.extra_args.begin(), group.extra_args.end());
    commands_.push_back(experiment::shell_join(argv));
    const std::string name = group.count == 1 ? "the edge" : "edge " + std::to_string(k);
    edge_children_.push_back(
        &children_.start(experiment::ChildSpec{name, argv, process_log(tag + ".log"), {}}));
    edge_logs_.push_back(logs);
    ready_files.push_back(ready);
  }
  const auto deadline = Clock::now() + kEdgeReadyTimeout;
  for (std::size_t i = 0; i < ready_files.size(); ++i) {
    while (!fs::exists(ready_files[i])) {
      if (Clock::now() > deadline)
        throw std::runtime_error(
            edge_children_[i]->name() + " did not write its ready file within " +
            std::to_string(kEdgeReadyTimeout.count()) + " s; the end of its log:\n" +
            indent(experiment::file_tail(edge_children_[i]->spec().output_file)));
      tick(milliseconds(20));
    }
    say(edge_children_[i]->name() + " ready (pid " + std::to_string(edge_children_[i]->pid()) +
        ")");
  }
}

void BenchRig::stop_edge() {
  // Last started first, as the child set does.
  for (auto it = edge_children_.rbegin(); it != edge_children_.rend(); ++it) {
    const auto status = children_.stop(**it, kStopGrace);
    if (!status.success())
      say((*it)->name() + " did not stop cleanly on SIGTERM (" + status.describe() + ")");
  }
  edge_children_.clear();
  edge_logs_.clear();
  metrics_ports_.clear();
}

void BenchRig::stop_all() {
  fleets_.clear();
  edge_children_.clear();
  edge_logs_.clear();
  metrics_ports_.clear();
  redis_child_ = nullptr;
  broker_child_ = nullptr;
  (void)children_.stop_all(kStopGrace);
  // The engines after their clients (the edges would otherwise log outages on the way out).
  rabbitmq_.reset();
  redis_cluster_.reset();
}

pid_t BenchRig::broker_pid() const {
  return broker_child_ ? broker_child_->pid() : -1;
}
pid_t BenchRig::edge_pid() const {
  return edge_children_.empty() ? -1 : edge_children_.front()->pid();
}
std::vector<pid_t> BenchRig::edge_pids() const {
  std::vector<pid_t> pids;
  for (const experiment::Child* c : edge_children_) pids.push_back(c->pid());
  return pids;
}
pid_t BenchRig::redis_pid() const {
  return redis_child_ ? redis_child_->pid() : -1;
}

std::vector<pid_t> BenchRig::broker_node_pids() const {
  std::vector<pid_t> pids;
  if (rabbitmq_)
    for (int i = 0; i < rabbitmq_->size(); ++i) pids.push_back(rabbitmq_->vm_pid(i));
  return pids;
}

std::vector<pid_t> BenchRig::redis_node_pids() const {
  std::vector<pid_t> pids;
  if (redis_cluster_)
    for (int i = 0; i < redis_cluster_->size(); ++i) pids.push_back(redis_cluster_->pid(i));
  return pids;
}

std::vector<int> BenchRig::redis_node_ports() const {
  std::vector<int> ports;
  if (redis_cluster_)
    for (int i = 0; i < redis_cluster_->size(); ++i) ports.push_back(redis_cluster_->port(i));
  return ports;
}

std::string BenchRig::cluster_mqtt(int node) const {
  if (!rabbitmq_) throw std::logic_error("cluster_mqtt: no cluster started");
  return rabbitmq_->host(node) + ":" + std::to_string(rabbitmq_->mqtt_port(node));
}

bool BenchRig::redis_node_is_primary(int node) const {
  return redis_cluster_ &&
         redis_cluster_->command(node, {"INFO", "replication"}).find("role:master") !=
             std::string::npos;
}

void BenchRig::start_cluster(int broker_nodes, int redis_primaries) {
  if (rabbitmq_ || redis_cluster_ || broker_child_ || redis_child_)
    throw std::logic_error("start_cluster: a broker or a store is already running");
  if (engines::RabbitMqCluster::executable().empty())
    throw std::runtime_error(
        "--cluster needs RabbitMQ: install the rabbitmq-server package (and its Erlang)");
  say("starting " + std::to_string(broker_nodes) + " RabbitMQ nodes, one after the other");
  rabbitmq_ =
      std::make_unique<engines::RabbitMqCluster>((dir_ / "rabbitmq").string(), broker_nodes);
  for (int i = 0; i < broker_nodes; ++i)
    say("broker node " + std::to_string(i) + ": MQTT " + cluster_mqtt(i) + ", AMQP " +
        rabbitmq_->host(i) + ":" + std::to_string(rabbitmq_->amqp_port(i)) + " (Erlang VM pid " +
        std::to_string(rabbitmq_->vm_pid(i)) + ")");
  say("starting a Redis Cluster: " + std::to_string(redis_primaries) +
      " primaries with a replica each");
  fs::create_directories(dir_ / "redis-cluster");
  redis_cluster_ = std::make_unique<engines::RedisClusterNodes>((dir_ / "redis-cluster").string(),
                                                                redis_primaries, 1);
  say("Redis Cluster nodes " + redis_cluster_->seeds());
  mosquitto_version_ = "RabbitMQ, " + std::to_string(broker_nodes) + " nodes (MQTT plugin)";
}

void BenchRig::tick(milliseconds step) {
  experiment::throw_if_interrupted();
  std::vector<experiment::Child*> watched = {broker_child_, redis_child_};
  watched.insert(watched.end(), edge_children_.begin(), edge_children_.end());
  for (experiment::Child* c : watched)
    if (c != nullptr)
      if (auto status = c->poll()) throw std::runtime_error(ended_message(*c, *status));
  std::this_thread::sleep_for(step);
  experiment::throw_if_interrupted();
}

std::vector<std::uint64_t> BenchRig::edge_rows_each(const std::string& mode) {
  std::vector<std::uint64_t> rows;
  if (edge_logs_.empty()) {  // no edge running: the single edge's folder
    experiment::CsvRowCounter counter((logs_dir() / ("server_logs_" + mode + ".csv")).string());
    rows.push_back(counter.rows());
    return rows;
  }
  for (const fs::path& logs : edge_logs_) {
    experiment::CsvRowCounter counter((logs / ("server_logs_" + mode + ".csv")).string());
    rows.push_back(counter.rows());
  }
  return rows;
}

std::uint64_t BenchRig::edge_rows(const std::string& mode) {
  std::uint64_t total = 0;
  for (const std::uint64_t n : edge_rows_each(mode)) total += n;
  return total;
}

void BenchRig::start_fleet(experiment::DeviceCommand c,
                           const std::vector<std::string>& extra_args) {
  start_fleets({std::move(c)}, extra_args);
}

void BenchRig::start_fleets(std::vector<experiment::DeviceCommand> commands,
                            const std::vector<std::string>& extra_args) {
  if (!fleets_.empty()) throw std::logic_error("a fleet is already running");
  if (commands.empty()) throw std::logic_error("start_fleets: no fleet");
  rows_before_fleet_ = edge_rows(commands.front().mode);
  fleet_started_ = Clock::now();
  for (experiment::DeviceCommand& c : commands) {
    const int n = ++fleets_started_;
    const std::string name = c.mode + "-" + std::to_string(n);
    if (c.broker.empty()) c.broker = broker_.str();
    if (c.credentials.empty()) c.credentials = credentials_;
    if (c.logs_dir.empty()) c.logs_dir = logs_dir().string();
    c.summary_json = (dir_ / "processes" / ("device-" + name + ".summary.json")).string();
    c.progress = false;
    auto argv = experiment::device_argv(dsekp_, c);
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    Fleet fleet;
    fleet.command = c;
    fleet.command_text = experiment::shell_join(argv);
    commands_.push_back(fleet.command_text);
    fleet.child = &children_.start(experiment::ChildSpec{
        "dsekp device (" + name + ")", argv, process_log("device-" + name + ".log"), {}});
    fleets_.push_back(std::move(fleet));
  }
}

bool BenchRig::fleet_running() {
  return std::any_of(fleets_.begin(), fleets_.end(),
                     [](const Fleet& f) { return f.child->running(); });
}

namespace {

/// Adds one fleet's summary into another: whole numbers summed (counters), other numbers (the
/// times) and the exit code the largest, a null (a time one fleet could not give) kept, flags
/// or-ed, objects merged the same way, everything else the first's.
void add_summary(nlohmann::json& into, const nlohmann::json& from) {
  for (auto it = from.begin(); it != from.end(); ++it) {
    if (!into.contains(it.key())) continue;
    nlohmann::json& slot = into[it.key()];
    const nlohmann::json& value = it.value();
    if (slot.is_object() && value.is_object()) {
      add_summary(slot, value);
    } else if (slot.is_null() || value.is_null()) {
      slot = nullptr;
    } else if (slot.is_boolean() && value.is_boolean()) {
      slot = slot.get<bool>() || value.get<bool>();
    } else if (!slot.is_number() || !value.is_number()) {
      continue;
    } else if (it.key() == "exit_code" || !slot.is_number_unsigned() ||
               !value.is_number_unsigned()) {
      if (value.get<double>() > slot.get<double>()) slot = value;
    } else {
      slot = slot.get<std::uint64_t>() + value.get<std::uint64_t>();
    }
  }
}

/// Several fleets' summaries as one (add_summary); null if one is not an object.
nlohmann::json merged_summary(const std::vector<nlohmann::json>& summaries) {
  nlohmann::json merged = summaries.front();
  for (std::size_t i = 1; i < summaries.size(); ++i) {
    if (!merged.is_object() || !summaries[i].is_object()) return nullptr;
    add_summary(merged, summaries[i]);
  }
  return merged;
}

}  // namespace

FleetRun BenchRig::finish_fleet(std::chrono::seconds limit, std::chrono::seconds settle_quiet) {
  if (fleets_.empty()) throw std::logic_error("no fleet is running");
  FleetRun run;
  std::vector<nlohmann::json> summaries;
  for (const Fleet& fleet : fleets_) {
    experiment::Child& child = *fleet.child;
    run.command += (run.command.empty() ? "" : "\n") + fleet.command_text;
    std::optional<experiment::ExitStatus> status;
    while (!(status = child.poll())) {
      if (Clock::now() - fleet_started_ > limit)
        throw std::runtime_error(child.name() + " did not finish within " +
                                 std::to_string(limit.count()) + " s; the end of its output (" +
                                 child.spec().output_file + "):\n" +
                                 indent(experiment::file_tail(child.spec().output_file)));
      tick(milliseconds(50));
    }
    run.wall_s = std::chrono::duration<double>(Clock::now() - fleet_started_).count();
    const std::string output = child.spec().output_file;
    (void)children_.stop(child, kStopGrace);  // ended already: only forgotten
    if (run.exit_code == 0) {
      run.exit_code = status->shell_code();
      run.exit_text = status->describe();
    }
    summaries.push_back(read_json(fleet.command.summary_json));
    if (status->code == 2 && status->signal == 0)
      throw std::runtime_error("dsekp device refused its arguments or credentials (exit code 2): " +
                               experiment::file_tail(output, 1000));
    if (!status->success())
      run.problems.push_back("dsekp device ended with " + status->describe() + " (see " + output +
                             ")");
    if (summaries.back().is_null())
      run.problems.push_back("dsekp device wrote no readable summary (" +
                             fleet.command.summary_json + ")");
  }
  const experiment::DeviceCommand fleet_command = fleets_.front().command;
  fleets_.clear();
  run.summary = merged_summary(summaries);

  // The broker has acknowledged the frames; the edge may still be working through its queue.
  const char* counted = fleet_command.qos == 1 ? "packets_acked" : "packets_sent";
  std::uint64_t expected = 0;
  if (run.summary.is_object() && run.summary.contains(counted) &&
      run.summary[counted].is_number_unsigned())
    expected = run.summary[counted].get<std::uint64_t>();
  // The server log of a mode holds every run of that mode so far in this folder; with several
  // edges the frames are spread over their logs.
  std::vector<experiment::CsvRowCounter> counters;
  if (edge_logs_.empty()) {
    counters.emplace_back((logs_dir() / ("server_logs_" + fleet_command.mode + ".csv")).string());
  } else {
    for (const fs::path& logs : edge_logs_)
      counters.emplace_back((logs / ("server_logs_" + fleet_command.mode + ".csv")).string());
  }
  const auto rows = [&counters] {
    std::uint64_t total = 0;
    for (auto& c : counters) total += c.rows();
    return total;
  };
  const std::uint64_t before = rows_before_fleet_;
  std::uint64_t seen = rows();
  auto last_change = Clock::now();
  while (seen < before + expected) {
    tick(milliseconds(50));
    const std::uint64_t now = rows();
    if (now != seen) {
      seen = now;
      last_change = Clock::now();
    } else if (Clock::now() - last_change > settle_quiet) {
      run.problems.push_back("the edges logged " + std::to_string(seen - before) + " of the " +
                             std::to_string(expected) +
                             " frames the broker acknowledged (nothing "
                             "new for " +
                             std::to_string(settle_quiet.count()) + " s)");
      break;
    }
  }
  run.edge_rows = seen - before;
  return run;
}

}  // namespace dsekp::bench::e2e
