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

void BenchRig::start_edge(const std::vector<std::string>& extra_args) {
  if (edge_child_ != nullptr) throw std::logic_error("the edge is already running");
  const int n = ++edges_started_;
  const fs::path ready = dir_ / "processes" / ("edge-" + std::to_string(n) + ".ready");
  experiment::EdgeCommand c;
  c.broker = broker_.str();
  c.registry_db = registry_db_;
  c.state_db = (dir_ / "secrets" / ("edge-state-" + std::to_string(n) + ".db")).string();
  c.logs_dir = logs_dir().string();
  c.ready_file = ready.string();
  // The edge keeps a persistent MQTT session: a fresh id per bench run and edge.
  c.client_id = "dsekp-bench-" + std::to_string(::getpid()) + "-" + std::to_string(n);
  auto argv = experiment::edge_argv(dsekp_, c);
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  commands_.push_back(experiment::shell_join(argv));
  edge_child_ = &children_.start(experiment::ChildSpec{
      "the edge", argv, process_log("edge-" + std::to_string(n) + ".log"), {}});
  const auto deadline = Clock::now() + kEdgeReadyTimeout;
  while (!fs::exists(ready)) {
    if (Clock::now() > deadline)
      throw std::runtime_error("the edge did not write its ready file within " +
                               std::to_string(kEdgeReadyTimeout.count()) +
                               " s; the end of its log:\n" +
                               indent(experiment::file_tail(edge_child_->spec().output_file)));
    tick(milliseconds(20));
  }
  say("edge ready (pid " + std::to_string(edge_child_->pid()) + ")");
}

void BenchRig::stop_edge() {
  if (edge_child_ == nullptr) return;
  experiment::Child* edge = edge_child_;
  edge_child_ = nullptr;
  const auto status = children_.stop(*edge, kStopGrace);
  if (!status.success())
    say("the edge did not stop cleanly on SIGTERM (" + status.describe() + ")");
}

void BenchRig::stop_all() {
  fleet_child_ = nullptr;
  edge_child_ = nullptr;
  broker_child_ = nullptr;
  (void)children_.stop_all(kStopGrace);
}

pid_t BenchRig::broker_pid() const {
  return broker_child_ ? broker_child_->pid() : -1;
}
pid_t BenchRig::edge_pid() const {
  return edge_child_ ? edge_child_->pid() : -1;
}

void BenchRig::tick(milliseconds step) {
  experiment::throw_if_interrupted();
  for (experiment::Child* c : {broker_child_, edge_child_})
    if (c != nullptr)
      if (auto status = c->poll()) throw std::runtime_error(ended_message(*c, *status));
  std::this_thread::sleep_for(step);
  experiment::throw_if_interrupted();
}

std::uint64_t BenchRig::edge_rows(const std::string& mode) {
  experiment::CsvRowCounter rows((logs_dir() / ("server_logs_" + mode + ".csv")).string());
  return rows.rows();
}

void BenchRig::start_fleet(experiment::DeviceCommand c,
                           const std::vector<std::string>& extra_args) {
  if (fleet_child_ != nullptr) throw std::logic_error("a fleet is already running");
  const int n = ++fleets_started_;
  const std::string name = c.mode + "-" + std::to_string(n);
  c.broker = broker_.str();
  if (c.credentials.empty()) c.credentials = credentials_;
  if (c.logs_dir.empty()) c.logs_dir = logs_dir().string();
  c.summary_json = (dir_ / "processes" / ("device-" + name + ".summary.json")).string();
  c.progress = false;
  auto argv = experiment::device_argv(dsekp_, c);
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  fleet_command_ = c;
  rows_before_fleet_ = edge_rows(c.mode);
  fleet_command_text_ = experiment::shell_join(argv);
  commands_.push_back(fleet_command_text_);
  fleet_started_ = Clock::now();
  fleet_child_ = &children_.start(experiment::ChildSpec{
      "dsekp device (" + name + ")", argv, process_log("device-" + name + ".log"), {}});
}

bool BenchRig::fleet_running() {
  return fleet_child_ != nullptr && fleet_child_->running();
}

FleetRun BenchRig::finish_fleet(std::chrono::seconds limit, std::chrono::seconds settle_quiet) {
  if (fleet_child_ == nullptr) throw std::logic_error("no fleet is running");
  experiment::Child& child = *fleet_child_;
  FleetRun run;
  run.command = fleet_command_text_;
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
  fleet_child_ = nullptr;
  run.exit_code = status->shell_code();
  run.exit_text = status->describe();
  run.summary = read_json(fleet_command_.summary_json);
  if (status->code == 2 && status->signal == 0)
    throw std::runtime_error("dsekp device refused its arguments or credentials (exit code 2): " +
                             experiment::file_tail(output, 1000));
  if (!status->success())
    run.problems.push_back("dsekp device ended with " + status->describe() + " (see " + output +
                           ")");
  if (run.summary.is_null())
    run.problems.push_back("dsekp device wrote no readable summary (" +
                           fleet_command_.summary_json + ")");

  // The broker has acknowledged the frames; the edge may still be working through its queue.
  const char* counted = fleet_command_.qos == 1 ? "packets_acked" : "packets_sent";
  std::uint64_t expected = 0;
  if (run.summary.is_object() && run.summary.contains(counted) &&
      run.summary[counted].is_number_unsigned())
    expected = run.summary[counted].get<std::uint64_t>();
  // The server log of a mode holds every run of that mode so far in this folder.
  experiment::CsvRowCounter rows(
      (logs_dir() / ("server_logs_" + fleet_command_.mode + ".csv")).string());
  const std::uint64_t before = rows_before_fleet_;
  std::uint64_t seen = rows.rows();
  auto last_change = Clock::now();
  while (seen < before + expected) {
    tick(milliseconds(50));
    const std::uint64_t now = rows.rows();
    if (now != seen) {
      seen = now;
      last_change = Clock::now();
    } else if (Clock::now() - last_change > settle_quiet) {
      run.problems.push_back("the edge logged " + std::to_string(seen - before) + " of the " +
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
