// `dsekp device` end to end (see fleet_runner.hpp).
#include "device/fleet_runner.hpp"

#include <mosquitto.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "device/client_logs.hpp"
#include "device/credentials.hpp"
#include "device/fleet_counters.hpp"
#include "device/mqtt_fleet.hpp"
#include "logs/log_schema.hpp"

namespace dsekp::device {
namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct BrokerAddress {
  std::string host;
  std::uint16_t port = 0;
};

BrokerAddress parse_broker(const std::string& text) {
  const auto colon = text.rfind(':');
  const UsageError bad("--broker: expected HOST:PORT, got \"" + text + "\"");
  if (colon == std::string::npos || colon == 0) throw bad;
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, port);
  if (ec != std::errc() || end != last || port == 0 || port > 65535 || host.empty()) throw bad;
  return {host, static_cast<std::uint16_t>(port)};
}

/// A fleet needs one descriptor per device plus a few; the soft limit is raised to the hard one.
rlim_t raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error(tmp.string() + ": cannot write");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(path.string() + ": cannot write: " + ec.message());
}

/// What the run needs that is created before the fleet and closed after it.
struct Logs {
  std::unique_ptr<ClientLogWriter> data;
  std::unique_ptr<HandshakeLogWriter> handshakes;

  void flush() {
    if (data) data->flush();
    if (handshakes) handshakes->flush();
  }
  /// Closes both; the first write error, or empty.
  std::string close() {
    std::string error;
    if (data && !data->close()) error = data->error();
    if (handshakes && !handshakes->close() && error.empty()) error = handshakes->error();
    return error;
  }
};

void wait_for_the_next_second() {
  using namespace std::chrono;
  const auto now = system_clock::now().time_since_epoch();
  std::this_thread::sleep_for(duration_cast<seconds>(now) + seconds(1) - now);
}

int run(const FleetOptions& o) {
  if (const std::string problem = validate_options(o); !problem.empty()) throw UsageError(problem);
  const BrokerAddress broker = parse_broker(o.broker);

  std::vector<ProvisionedDevice> devices;
  try {
    devices = load_credentials(o.credentials);
  } catch (const CredentialsError& e) {
    throw UsageError(std::string("credentials file ") + e.what());
  }
  if (o.devices) {
    if (*o.devices > devices.size())
      throw UsageError("--devices " + std::to_string(*o.devices) + ": " + o.credentials.string() +
                       " holds only " + std::to_string(devices.size()) + " device(s)");
    devices.resize(*o.devices);
  }
  if (o.mode == Mode::psk)
    for (const ProvisionedDevice& d : devices)
      if (!d.has_psk_key)
        throw UsageError("--mode psk: " + std::string(d.credentials.dev_id.str()) +
                         " has no PSK key (provision it with `dsekp keys add --psk-baseline`)");

  if (o.mode == Mode::dsekp)
    for (const ProvisionedDevice& d : devices)
      if (d.ratchet && o.ratchet_dir.empty())
        throw UsageError(std::string(d.credentials.dev_id.str()) +
                         " ratchets its secret (provisioned with `dsekp keys add --ratchet`): "
                         "--ratchet-dir DIR must say where the devices keep their secrets");
  if (!o.ratchet_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.ratchet_dir, ec);
    if (!ec)
      std::filesystem::permissions(o.ratchet_dir, std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::replace, ec);
    if (ec) throw std::runtime_error(o.ratchet_dir.string() + ": cannot create: " + ec.message());
  }

  const rlim_t descriptors = raise_descriptor_limit();
  if (devices.size() + 64 > descriptors) {
    std::fprintf(stderr,
                 "dsekp device: %zu devices need about %zu file descriptors, the limit is %llu "
                 "(raise it with `ulimit -n`)\n",
                 devices.size(), devices.size() + 64, static_cast<unsigned long long>(descriptors));
    return kExitFailure;
  }

  Logs logs;
  if (!o.logs_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.logs_dir, ec);
    if (ec) throw std::runtime_error(o.logs_dir.string() + ": cannot create: " + ec.message());
    logs.data = std::make_unique<ClientLogWriter>(
        o.logs_dir / dsekp::logs::standard_file_name(dsekp::logs::LogKind::client, o.mode), o.mode);
    if (o.mode == Mode::dsekp)
      logs.handshakes =
          std::make_unique<HandshakeLogWriter>(o.logs_dir / dsekp::logs::kHandshakeLogFileName);
  }

  MbedtlsRng rng;  // one OS-seeded DRBG for the whole fleet (one thread)
  if (!rng.ready()) throw std::runtime_error("cannot seed the random generator (mbedTLS CTR-DRBG)");

  AgentConfig agent;
  agent.mode = o.mode;
  agent.encoding = o.encoding;
  agent.qos = o.qos;
  agent.count = o.count;
  agent.interval_ms = o.interval_ms;
  agent.reset_every = o.reset_every;
  agent.reset_prob = o.reset_prob;
  agent.max_handshake_failures = o.max_handshake_failures;
  agent.seed = o.seed;
  if (o.rekey_at_seq) agent.session.rekey_at_seq = *o.rekey_at_seq;
  agent.session.retransmit_initial_ms = o.retransmit_initial_ms;
  agent.session.retransmit_max_ms = o.retransmit_max_ms;
  agent.session.init_max_age_ms = o.init_max_age_ms;
  agent.ratchet_dir = o.ratchet_dir;

  FleetCounters counters;
  AgentContext context;
  context.rng = &rng;
  context.counters = &counters;
  context.data_log = logs.data.get();
  context.handshake_log = logs.handshakes.get();

  FleetLoopOptions loop;
  loop.broker_host = broker.host;
  loop.broker_port = broker.port;
  loop.anonymous = o.anonymous;
  loop.keepalive_s = o.keepalive_s;
  loop.connect_rate = o.connect_rate;
  loop.duration_ms = static_cast<std::uint64_t>(o.duration_s * 1000.0);
  loop.drain_timeout_ms = o.drain_timeout_ms;
  loop.give_up_ms = o.give_up_s * 1000u;
  loop.progress = o.progress == ProgressMode::on ||
                  (o.progress == ProgressMode::automatic && isatty(STDERR_FILENO) == 1);
  loop.expected_frames = o.count * devices.size();

  // A process start is every simulated device's boot. A device keeps no INIT `t` across a
  // reboot, and the edge refuses a `t` not greater than the last it accepted from the device:
  // so, as the firmware SDK does, the fleet waits until the clock is in a second later than the
  // one it started in (a previous run's INIT was at most in that second).
  if (o.mode == Mode::dsekp) wait_for_the_next_second();

  FleetResult result;
  mosquitto_lib_init();
  try {
    MqttFleet fleet(devices, agent, context, loop);
    result = fleet.run([&logs] { logs.flush(); });
  } catch (...) {
    mosquitto_lib_cleanup();
    throw;
  }
  mosquitto_lib_cleanup();
  const std::string log_error = logs.close();

  FleetSummary summary;
  summary.mode = mode_name(o.mode);
  summary.encoding = o.encoding == Encoding::json ? "json" : "compact";
  summary.devices = devices.size();
  summary.counters = counters;
  summary.duration_s = result.duration_s;
  summary.connect_s = result.connect_s;
  summary.interrupted = result.reason == EndReason::interrupted;

  std::vector<std::string> problems;
  if (!log_error.empty()) problems.push_back(log_error);
  if (counters.devices_failed > 0)
    problems.push_back(std::to_string(counters.devices_failed) + " device(s) gave up");
  if (result.reason == EndReason::completed) {
    if (!result.all_done && counters.devices_failed == 0)
      problems.push_back("not every device sent its frames");
    if (!result.drain_complete)
      problems.push_back(std::to_string(counters.packets_sent - counters.packets_acked) +
                         " DATA frame(s) not acknowledged by the broker within " +
                         std::to_string(o.drain_timeout_ms / 1000) + " s");
  }
  if (result.reason == EndReason::duration && result.never_established > 0)
    problems.push_back(std::to_string(result.never_established) +
                       " device(s) never completed a handshake");
  summary.exit_code = summary.interrupted ? kExitInterrupted
                      : problems.empty()  ? kExitOk
                                          : kExitFailure;

  std::fputs(summary_text(summary).c_str(), stderr);
  for (const auto& p : problems) std::fprintf(stderr, "dsekp device: %s\n", p.c_str());
  if (!o.summary_json.empty()) {
    try {
      write_text_file(o.summary_json, summary_json(summary));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dsekp device: %s\n", e.what());
      if (summary.exit_code == kExitOk) return kExitFailure;
    }
  }
  return summary.exit_code;
}

}  // namespace

std::string validate_options(const FleetOptions& o) {
  if (o.broker.empty()) return "--broker is required";
  if (o.credentials.empty()) return "--credentials is required";
  if (o.devices && *o.devices == 0) return "--devices must be at least 1";
  if (o.interval_ms == 0) return "--interval-ms must be at least 1";
  if (!(o.duration_s >= 0) || o.duration_s > 1e9) return "--duration-s must be 0 or more";
  if (!(o.reset_prob >= 0 && o.reset_prob <= 1)) return "--reset-prob must be between 0 and 1";
  if (o.mode == Mode::psk && (o.reset_every > 0 || o.reset_prob > 0))
    return "resets (--reset-every, --reset-prob) are refused in PSK mode: a rebooted PSK device "
           "restarts seq at 0, which the analysis cannot tell apart from duplicates "
           "(docs/LOGS.md); run PSK resets as separate runs";
  if (o.qos != 0 && o.qos != 1) return "--qos must be 0 or 1";
  if (!(o.connect_rate > 0)) return "--connect-rate must be more than 0";
  if (o.rekey_at_seq && *o.rekey_at_seq == 0) return "--rekey-at-seq must be at least 1";
  if (o.keepalive_s != 0 && (o.keepalive_s < 5 || o.keepalive_s > 65535))
    return "--keepalive-s must be 0 or 5..65535";
  if (o.max_handshake_failures == 0) return "--max-handshake-failures must be at least 1";
  if (o.give_up_s == 0) return "--give-up-s must be at least 1";
  if (o.retransmit_initial_ms == 0 || o.retransmit_max_ms < o.retransmit_initial_ms)
    return "--retransmit-initial-ms must be at least 1 and at most --retransmit-max-ms";
  if (o.init_max_age_ms == 0) return "--init-max-age-ms must be at least 1";
  return "";
}

int run_device_fleet(const FleetOptions& options) noexcept {
  try {
    return run(options);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "dsekp device: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsekp device: %s\n", e.what());
    return kExitFailure;
  } catch (...) {
    std::fprintf(stderr, "dsekp device: unexpected error\n");
    return kExitFailure;
  }
}

}  // namespace dsekp::device
