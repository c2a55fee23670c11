// The experiment's phases, in order (see experiment.hpp).
#include "experiment.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "analyze/text_format.hpp"
#include "broker.hpp"
#include "commands.hpp"
#include "file_watch.hpp"
#include "interrupt.hpp"
#include "link_presets.hpp"
#include "logs/log_schema.hpp"
#include "machine_info.hpp"
#include "net.hpp"
#include "process.hpp"
#include "provision.hpp"
#include "report.hpp"
#include "results_dir.hpp"
#include "verdicts.hpp"

namespace dsekp::experiment {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using analyze::count;
using analyze::fixed;
using std::chrono::milliseconds;
using std::chrono::seconds;

/// How long a stopped child may take to end after SIGTERM before it gets SIGKILL. Devices flush
/// their logs and write their summary; the edge finishes the frame in hand.
constexpr milliseconds kStopGrace{5000};
/// How long the edge may go without logging a new row before we stop waiting for the frames a
/// device run had acknowledged.
constexpr seconds kSettleQuiet{10};

/// Parameters of the trial's edge: the trial resets devices hundreds of times faster than a real
/// deployment, so the per-device INIT token bucket (default 8, refilled over 30 s) is opened up;
/// rate limiting is not what the trial tests.
constexpr std::uint32_t kTrialInitBurst = 1000;
constexpr std::uint32_t kTrialInitRefillMs = 10;

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args.empty() ? "dsekp experiment" : shell_join(args);
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

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string indent(const std::string& text) {
  std::string out = "    ";
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size()) out += "    ";
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

class Experiment {
 public:
  explicit Experiment(ExperimentOptions options)
      : o_(std::move(options)),
        started_wall_(std::chrono::system_clock::now()),
        started_(Clock::now()),
        layout_(o_.out_dir.empty() ? default_results_dir(fs::current_path(), started_wall_)
                                   : fs::path(o_.out_dir)) {
    dsekp_ = o_.dsekp_exe.empty() ? self_exe() : o_.dsekp_exe;
    command_line_ = o_.command_line.empty() ? own_command_line() : o_.command_line;
    progress_ = ::isatty(STDERR_FILENO) == 1;
    phases_ = 6 + (o_.broker.empty() ? 1 : 0) + (o_.link.empty() ? 0 : 1) + (o_.trial ? 1 : 0);
  }

  [[nodiscard]] const fs::path& root() const { return layout_.root; }
  [[nodiscard]] bool had_problems() const { return !problems_.empty(); }
  /// False until the results folder was created (a refused --out must not be called "partial").
  [[nodiscard]] bool created() const { return created_; }

  void run() {
    prepare_results_dir(layout_.root);
    created_ = true;
    layout_.create();
    say("results in " + layout_.root.string());
    provision_devices();
    if (o_.broker.empty()) {
      start_private_broker();
    } else {
      use_existing_broker();
    }
    if (!o_.link.empty()) start_link();

    phase("edge (main runs): starting `dsekp edge`, logs in logs/main");
    Child* edge = &start_edge("main", layout_.logs_main, 0, 0);
    run_devices("psk", "psk", provisioned_.main_credentials, o_.devices, o_.packets,
                layout_.logs_main, 0, 0);
    run_devices("dsekp", "dsekp", provisioned_.main_credentials, o_.devices, o_.packets,
                layout_.logs_main, 0, 0);
    stop_edge(*edge, "main");

    if (o_.trial) {
      phase("multi-session trial: DSEKP, " + std::to_string(o_.trial_devices) + " devices x " +
            count(o_.trial_packets) + " frames, " + reset_text() + "; its own edge and logs");
      edge = &start_edge("trial", layout_.logs_trial, kTrialInitBurst, kTrialInitRefillMs);
      run_devices("trial", "dsekp", provisioned_.trial_credentials, o_.trial_devices,
                  o_.trial_packets, layout_.logs_trial, effective_reset_prob(o_), o_.reset_every);
      stop_edge(*edge, "trial");
    }
    stop_services();
    analyze_all();
    write_report();
  }

  /// Stops everything still running, last started first (on failure and on a signal).
  std::size_t stop_children() { return children_.stop_all(kStopGrace); }

 private:
  // ---- output ------------------------------------------------------------------------------

  void say(const std::string& line) {
    std::fprintf(stderr, "dsekp experiment: %s\n", line.c_str());
    std::fflush(stderr);
  }

  void phase(const std::string& line) {
    ++phase_;
    std::fprintf(stderr, "[%d/%d] %s\n", phase_, phases_, line.c_str());
    std::fflush(stderr);
  }

  void problem(const std::string& text) {
    problems_.push_back(text);
    say("problem: " + text);
  }

  std::string process_log(const std::string& name) const {
    return (layout_.processes / name).string();
  }

  /// "the edge (main) ended unexpectedly (exit code 1); the end of its log (PATH):\n..."
  static std::string ended_message(Child& child, const ExitStatus& status) {
    const std::string log = child.spec().output_file;
    return child.name() + " ended unexpectedly (" + status.describe() + "); the end of its log (" +
           log + "):\n" + indent(file_tail(log));
  }

  /// Throws if the broker, the link or the edge has died (they must run for the whole phase).
  void check_services() {
    for (Child* c : services_)
      if (auto status = c->poll()) throw std::runtime_error(ended_message(*c, *status));
  }

  /// Sleeps a little, unwinding on a signal and failing if a service died.
  void tick(milliseconds step = milliseconds(50)) {
    throw_if_interrupted();
    check_services();
    std::this_thread::sleep_for(step);
    throw_if_interrupted();
  }

  std::string reset_text() const {
    if (o_.reset_every > 0) return "a reset every " + count(o_.reset_every) + " frames";
    return "resets with probability " + fixed(effective_reset_prob(o_), 4) + " per frame (~" +
           fixed(expected_trial_resets(o_), 0) + " expected)";
  }

  // ---- phases ------------------------------------------------------------------------------

  void provision_devices() {
    ProvisionRequest request;
    request.secrets_dir = layout_.secrets.string();
    request.main_devices = device_ids("esp32-", o_.devices);
    if (o_.trial) request.trial_devices = device_ids("trial-", o_.trial_devices);
    request.broker_accounts = o_.broker.empty();
    phase("provisioning " + std::to_string(o_.devices) + " device(s) for the main runs" +
          (o_.trial ? " and " + std::to_string(o_.trial_devices) + " for the trial" : "") +
          " in a fresh registry (secrets/)");
    provisioned_ = provision(request);
  }

  void start_private_broker() {
    const std::string mosquitto = o_.mosquitto.empty() ? find_mosquitto() : o_.mosquitto;
    machine_.mosquitto = mosquitto_version(mosquitto, process_log("mosquitto-version.txt"));
    phase("broker: " + machine_.mosquitto + " (" + mosquitto + ") on a free loopback port");
    MosquittoSettings settings;
    settings.password_file = provisioned_.password_file;
    settings.acl_file = provisioned_.acl_file;
    settings.log_file = process_log("mosquitto.log");
    settings.user = current_user_name();
    const StartedBroker started =
        start_mosquitto(children_, mosquitto, settings,
                        (layout_.broker / "mosquitto.conf").string(), process_log("mosquitto.out"));
    services_.push_back(started.child);
    broker_ = started.address;
    broker_text_ = "private " + machine_.mosquitto + " on " + broker_.str() +
                   " (password file + ACL, anonymous refused, no persistence)";
    say("broker listening on " + broker_.str());
  }

  void use_existing_broker() {
    broker_ = parse_host_port(o_.broker, "--broker");
    machine_.mosquitto = "external broker";
    if (!accepts_tcp(broker_))
      throw std::runtime_error("--broker " + broker_.str() + ": nothing accepts connections there");
    broker_text_ = "existing broker " + broker_.str() +
                   " (given with --broker; devices and edge connect anonymously)";
    say("using the existing broker " + broker_.str() + " (anonymous logins)");
  }

  void start_link() {
    link_ = resolve_link(o_.link);
    phase("link: `dsekp link --link " + link_.spec + "` between the devices and the broker");
    LinkCommand c;
    c.target = broker_.str();
    c.spec = link_.spec;
    c.seed = o_.seed;
    c.stats_json = process_log("link-stats.json");
    const std::string stdout_file = process_log("link.stdout");
    const auto argv = link_argv(dsekp_, c);
    commands_.push_back(shell_join(argv));
    Child& child =
        children_.start(ChildSpec{"the link emulator", argv, process_log("link.log"), stdout_file});
    services_.push_back(&child);
    // Its first stdout line names the port it listens on.
    const auto deadline = Clock::now() + seconds(10);
    const std::string prefix = "dsekp link: listening on ";
    for (;;) {
      tick(milliseconds(20));
      std::ifstream in(stdout_file);
      std::string line;
      if (std::getline(in, line) && !in.eof()) {
        if (line.rfind(prefix, 0) != 0)
          throw std::runtime_error("the link emulator's first line is not \"" + prefix +
                                   "HOST:PORT\" but \"" + line + "\"");
        device_broker_ = parse_host_port(line.substr(prefix.size()), "dsekp link's address");
        break;
      }
      if (Clock::now() > deadline)
        throw std::runtime_error(
            "the link emulator did not report its port within 10 s; the end "
            "of its log:\n" +
            indent(file_tail(child.spec().output_file)));
    }
    say("link listening on " + device_broker_.str() + " -> " + broker_.str());
  }

  Child& start_edge(const std::string& name, const fs::path& logs_dir, std::uint32_t burst,
                    std::uint32_t refill_ms) {
    const fs::path ready = layout_.processes / ("edge-" + name + ".ready");
    EdgeCommand c;
    c.broker = broker_.str();
    c.registry_db = provisioned_.registry_db;
    c.state_db = (layout_.secrets / ("edge-state-" + name + ".db")).string();
    c.logs_dir = logs_dir.string();
    c.ready_file = ready.string();
    // Distinct per run and per experiment: the edge keeps a persistent MQTT session, and the
    // trial's edge must not inherit frames queued for the main runs' (nor, on a shared broker,
    // anyone else's).
    c.client_id = "dsekp-experiment-" + utc_stamp(started_wall_) + "-" + name;
    c.init_burst = burst;
    c.init_refill_ms = refill_ms;
    const auto argv = edge_argv(dsekp_, c);
    commands_.push_back(shell_join(argv));
    Child& child = children_.start(
        ChildSpec{"the edge (" + name + ")", argv, process_log("edge-" + name + ".log"), {}});
    services_.push_back(&child);
    const auto deadline = Clock::now() + seconds(o_.edge_ready_timeout_s);
    while (!fs::exists(ready)) {
      if (auto status = child.poll()) throw std::runtime_error(ended_message(child, *status));
      if (Clock::now() > deadline)
        throw std::runtime_error("the edge (" + name + ") did not write its ready file within " +
                                 std::to_string(o_.edge_ready_timeout_s) +
                                 " s; the end of its log:\n" +
                                 indent(file_tail(child.spec().output_file)));
      tick(milliseconds(20));
    }
    say("edge (" + name + ") ready (pid " + std::to_string(child.pid()) + ")");
    return child;
  }

  void stop_edge(Child& edge, const std::string& name) {
    std::erase(services_, &edge);
    const ExitStatus status = children_.stop(edge, kStopGrace);
    if (!status.success())
      problem("the edge (" + name + ") did not stop cleanly on SIGTERM (" + status.describe() +
              "); see processes/edge-" + name + ".log");
  }

  double expected_seconds(std::uint64_t frames, std::size_t devices, double resets) const {
    return static_cast<double>(frames) * o_.interval_ms / 1000.0 +
           static_cast<double>(devices) / 500.0 + resets * 2.0;
  }

  void run_devices(const std::string& name, const std::string& mode, const std::string& credentials,
                   std::size_t devices, std::uint64_t frames, const fs::path& logs_dir,
                   double reset_prob, std::uint64_t reset_every) {
    DeviceCommand c;
    c.broker = device_broker_.port != 0 ? device_broker_.str() : broker_.str();
    c.mode = mode;
    c.credentials = credentials;
    c.encoding = o_.encoding;
    c.devices = devices;
    c.count = frames;
    c.interval_ms = o_.interval_ms;
    c.logs_dir = logs_dir.string();
    c.summary_json = (layout_.devices / ("summary-" + name + ".json")).string();
    c.reset_prob = reset_prob;
    c.reset_every = reset_every;
    c.seed = o_.seed;
    c.qos = o_.qos;
    c.progress = progress_;
    c.anonymous = !o_.broker.empty();
    const auto argv = device_argv(dsekp_, c);

    DeviceRunRecord record;
    record.name = name;
    record.mode = mode;
    record.devices = devices;
    record.frames_per_device = frames;
    record.command = shell_join(argv);

    const double resets = name == "trial" ? expected_trial_resets(o_) : 0;
    const double expected = expected_seconds(frames, devices, resets);
    const double limit = 60 + 1.5 * expected + (o_.link.empty() ? 0 : 30);
    if (name != "trial")
      phase((mode == "psk" ? std::string("PSK run") : std::string("DSEKP run")) + ": " +
            std::to_string(devices) + " device(s) x " + count(frames) + " frames every " +
            count(o_.interval_ms) + " ms (~" + fixed(expected, 0) + " s)");

    const std::string output = process_log("device-" + name + ".log");
    const auto start = Clock::now();
    Child& child = children_.start(ChildSpec{"dsekp device (" + name + ")", argv, output, {}});
    FileFollower follow(output);
    std::optional<ExitStatus> status;
    while (!(status = child.poll())) {
      follow.pump(stderr);
      if (since(start) > limit)
        throw std::runtime_error("the " + name + " run did not finish within " + fixed(limit, 0) +
                                 " s (expected ~" + fixed(expected, 0) +
                                 " s); the end of its output (" + output + "):\n" +
                                 indent(file_tail(output)));
      tick(milliseconds(100));
    }
    follow.finish(stderr);
    (void)children_.stop(child, kStopGrace);  // ended already: just forgotten
    record.wall_s = since(start);
    record.exit_code = status->shell_code();
    record.exit_text = status->describe();
    record.summary = read_json(c.summary_json);
    if (status->code == 2 && status->signal == 0)
      throw std::runtime_error(
          "dsekp device (" + name +
          ") refused its arguments or credentials (exit code 2): " + file_tail(output, 1000));
    if (!status->success())
      problem("the " + name + " run's dsekp device ended with " + status->describe() +
              " (see processes/device-" + name + ".log)");
    if (record.summary.is_null())
      problem("the " + name + " run's dsekp device wrote no readable summary (" + c.summary_json +
              ")");

    // The device is done once the broker acknowledged its frames; wait until the edge has logged
    // them all (it may still be working through its queue), or until it stops making progress.
    const std::string csv_name =
        logs::standard_file_name(logs::LogKind::server, parse_mode(mode).value());
    CsvRowCounter rows((logs_dir / csv_name).string());
    const std::uint64_t acked = static_cast<std::uint64_t>(std::max(
        0.0,
        number_at(record.summary, o_.qos == 1 ? "/packets_acked" : "/packets_sent").value_or(0)));
    std::uint64_t seen = rows.rows();
    auto last_change = Clock::now();
    while (seen < acked) {
      tick(milliseconds(50));
      const std::uint64_t now = rows.rows();
      if (now != seen) {
        seen = now;
        last_change = Clock::now();
      } else if (Clock::now() - last_change > kSettleQuiet) {
        problem("the edge logged " + count(seen) + " of the " + count(acked) + " frames the " +
                name + " run's broker acknowledged (no new row for " +
                std::to_string(kSettleQuiet.count()) + " s)");
        break;
      }
    }
    record.edge_rows = seen;
    say(name + " run done in " + fixed(record.wall_s, 1) + " s: " +
        count(static_cast<std::uint64_t>(number_at(record.summary, "/packets_sent").value_or(0))) +
        " frames sent, " + count(acked) + " acknowledged, " + count(seen) + " logged by the edge");
    runs_.push_back(std::move(record));
  }

  /// Stops the link and the broker (the edges are stopped already), collecting the link's stats.
  void stop_services() {
    services_.clear();
    children_.stop_all(kStopGrace);
    if (!o_.link.empty()) link_stats_ = read_json(process_log("link-stats.json"));
  }

  nlohmann::json analyze_one(const std::string& name, const AnalyzeCommand& c) {
    const auto argv = analyze_argv(dsekp_, c);
    commands_.push_back(shell_join(argv));
    const std::string output = process_log("analyze-" + name + ".log");
    Child& child = children_.start(ChildSpec{"dsekp analyze (" + name + ")", argv, output, {}});
    const auto start = Clock::now();
    std::optional<ExitStatus> status;
    while (!(status = child.poll())) {
      if (since(start) > 600)
        throw std::runtime_error("dsekp analyze (" + name + ") did not finish within 600 s");
      tick(milliseconds(50));
    }
    (void)children_.stop(child, kStopGrace);
    std::fputs(indent(file_tail(output, 4000)).c_str(), stderr);
    if (!status->success()) {
      problem("dsekp analyze (" + name + ") ended with " + status->describe() + ": " +
              file_tail(output, 1000));
      return nullptr;
    }
    nlohmann::json summary = read_json(fs::path(c.out_dir) / "summary.json");
    if (summary.is_null()) problem("dsekp analyze (" + name + ") wrote no readable summary.json");
    return summary;
  }

  void analyze_all() {
    phase("analysis: `dsekp analyze --paper` on logs/main" +
          std::string(o_.trial ? " and logs/trial" : ""));
    AnalyzeCommand main;
    main.logs_dir = layout_.logs_main.string();
    main.out_dir = layout_.analysis_main.string();
    main.figures = o_.figures;
    main_summary_ = analyze_one("main", main);
    if (o_.trial) {
      AnalyzeCommand trial;
      using logs::LogKind;
      trial.dsekp_server =
          (layout_.logs_trial / logs::standard_file_name(LogKind::server, Mode::dsekp)).string();
      trial.dsekp_client =
          (layout_.logs_trial / logs::standard_file_name(LogKind::client, Mode::dsekp)).string();
      const fs::path handshakes = layout_.logs_trial / logs::kHandshakeLogFileName;
      if (fs::exists(handshakes)) trial.handshakes = handshakes.string();
      trial.out_dir = layout_.analysis_trial.string();
      trial.figures = o_.figures;
      for (const auto& f : {trial.dsekp_server, trial.dsekp_client})
        if (!fs::exists(f)) {
          problem("the trial left no " + f + ": its analysis is skipped");
          return;
        }
      trial_summary_ = analyze_one("trial", trial);
    }
  }

  void write_report() {
    phase("report: report.md and experiment.json");
    machine_info_fill();
    VerdictInputs vi;
    vi.main = main_summary_;
    vi.trial = trial_summary_;
    vi.link = !o_.link.empty();
    vi.link_name = link_.name;
    vi.encoding = o_.encoding;
    vi.qos = o_.qos;
    vi.configured_pps = static_cast<double>(o_.devices) * 1000.0 / o_.interval_ms;
    for (const auto& r : runs_)
      if (r.name == "trial")
        if (auto resets = number_at(r.summary, "/resets"))
          vi.trial_resets = static_cast<std::uint64_t>(*resets);

    ReportInputs in;
    auto& s = in.setup;
    s.started_utc = utc_iso(started_wall_);
    s.finished_utc = utc_iso(std::chrono::system_clock::now());
    s.duration_s = since(started_);
    s.command_line = command_line_;
    s.machine = machine_;
    s.broker = broker_text_;
    if (!o_.link.empty()) {
      s.link_name = link_.name;
      s.link_spec = link_.spec;
      s.link_description = link_.description;
      s.link_stats = link_stats_;
    }
    s.devices = o_.devices;
    s.packets = o_.packets;
    s.interval_ms = o_.interval_ms;
    s.paper_timing = o_.paper_timing;
    s.encoding = o_.encoding;
    s.qos = o_.qos;
    s.seed = o_.seed;
    s.trial = o_.trial;
    s.trial_devices = o_.trial_devices;
    s.trial_packets = o_.trial_packets;
    s.reset_prob = effective_reset_prob(o_);
    s.reset_every = o_.reset_every;
    s.expected_resets = expected_trial_resets(o_);
    s.trial_edge_limits = "--init-burst " + std::to_string(kTrialInitBurst) + " --init-refill-ms " +
                          std::to_string(kTrialInitRefillMs);
    in.runs = runs_;
    in.main_summary = main_summary_;
    in.trial_summary = trial_summary_;
    in.verdicts = compute_verdicts(vi);
    in.problems = problems_;
    in.commands = commands_;

    write_text(layout_.root / "report.md", report_markdown(in));
    write_text(layout_.root / "experiment.json", experiment_json(in).dump(2) + "\n");
    for (const auto& v : in.verdicts)
      std::printf("  %-18s %-18s ours: %s\n", v.id.c_str(),
                  std::string(outcome_text(v.outcome)).c_str(), v.ours.c_str());
    std::printf("Report: %s\n", (layout_.root / "report.md").c_str());
    std::fflush(stdout);
  }

  void machine_info_fill() {
    const std::string mosquitto = machine_.mosquitto;
    machine_ = collect_machine_info();
    machine_.mosquitto = mosquitto;
  }

  static void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path.string());
  }

  ExperimentOptions o_;
  std::chrono::system_clock::time_point started_wall_;
  Clock::time_point started_;
  ResultsLayout layout_;
  std::string dsekp_;
  std::string command_line_;
  bool progress_ = false;
  bool created_ = false;
  int phase_ = 0;
  int phases_ = 0;

  ChildSet children_;
  std::vector<Child*> services_;  // must stay up during a phase: broker, link, current edge
  Provisioned provisioned_;
  MachineInfo machine_;
  HostPort broker_;
  HostPort device_broker_;  // the link's address when there is one
  std::string broker_text_;
  LinkChoice link_;
  nlohmann::json link_stats_;
  std::vector<std::string> commands_;
  std::vector<DeviceRunRecord> runs_;
  nlohmann::json main_summary_;
  nlohmann::json trial_summary_;
  std::vector<std::string> problems_;
};

}  // namespace

int run_experiment(ExperimentOptions options) {
  InterruptGuard guard;
  try {
    for (const auto& note : finalize_options(options))
      std::fprintf(stderr, "dsekp experiment: note: %s\n", note.c_str());
    if (!options.link.empty()) (void)resolve_link(options.link);
    if (!options.broker.empty()) (void)parse_host_port(options.broker, "--broker");
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "dsekp experiment: %s\n", e.what());
    return 2;
  }
  std::optional<Experiment> x;
  try {
    x.emplace(std::move(options));
    x->run();
    if (x->had_problems()) {
      std::fprintf(stderr,
                   "dsekp experiment: finished, but with problems (listed above and in %s)\n",
                   (x->root() / "report.md").c_str());
      return 1;
    }
    return 0;
  } catch (const Interrupted& interrupted) {
    const std::size_t stopped = x ? x->stop_children() : 0;
    std::fprintf(stderr,
                 "\ndsekp experiment: interrupted (%s); stopped %zu running process(es). What "
                 "was written so far is in %s\n",
                 ::strsignal(interrupted.signal), stopped,
                 x && x->created() ? x->root().c_str() : "(no results folder yet)");
    return 130;
  } catch (const std::exception& e) {
    if (x) (void)x->stop_children();
    std::fprintf(stderr, "dsekp experiment: failed: %s\n", e.what());
    if (x && x->created())
      std::fprintf(stderr, "dsekp experiment: partial results in %s\n", x->root().c_str());
    return 1;
  }
}

}  // namespace dsekp::experiment
