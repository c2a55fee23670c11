// `dsekp edge --broker HOST:PORT --db PATH --logs-dir DIR ...` and `dsekp edge send DEV_ID
// PAYLOAD` (see edge_command.hpp). Errors in the arguments go to stderr here (exit 2 for a bad
// flag value, 1 for a bad config file); once the daemon runs it logs through its logger
// (edge/logging/edge_logger.hpp, `--log-format`, `--log-level`).
#include "edge_command.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/admin/admin_auth.hpp"
#include "edge/admin/admin_client.hpp"
#include "edge/daemon/edge_config_file.hpp"
#include "edge/daemon/edge_daemon.hpp"
#include "edge/logging/log_options.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/republish_topics.hpp"
#include "edge/registry/secure_file.hpp"
#include "edge/registry/text_encoding.hpp"
#include "usage_error.hpp"

namespace dsekp::cli {
namespace {

struct EdgeArgs {
  edge::daemon::EdgeDaemonOptions options;  // the flags' values (defaults where not given)
  std::string config;
  std::string broker;
  std::string username;
  bool no_csv = false;
  bool no_republish = false;
  bool republish = false;
  bool home_assistant = false;
  bool republish_retain = false;
  bool psk_baseline = false;
  std::string password_file;
  bool tls_insecure = false;
  std::string log_format = "text";
  std::string log_level = "info";
};

struct SendArgs {
  std::string config;  // the edge's TOML file: broker, db and prefix from it
  std::string broker;
  std::string db;
  std::string username;
  std::string password;
  std::string password_file;
  std::string prefix;
  std::string dev_id;
  std::string payload;
  bool hex = false;
  std::string request_id;
  double timeout_s = 10;
};

void parse_broker(const std::string& text, std::string& host, std::uint16_t& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw UsageError("--broker: expected HOST:PORT, got \"" + text + "\"");
  unsigned long value = 0;
  try {
    value = std::stoul(text.substr(colon + 1));
  } catch (const std::exception&) {
    throw UsageError("--broker: expected HOST:PORT, got \"" + text + "\"");
  }
  if (value == 0 || value > 65535) throw UsageError("--broker: port out of range");
  host = text.substr(0, colon);
  port = static_cast<std::uint16_t>(value);
}

std::vector<std::uint8_t> hex_bytes(const std::string& text) {
  if (text.size() % 2 != 0) throw std::runtime_error("PAYLOAD: odd number of hex digits");
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const auto digit = [&](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      throw std::runtime_error(std::string("PAYLOAD: not a hex digit: '") + c + "'");
    };
    out.push_back(static_cast<std::uint8_t>(digit(text[i]) * 16 + digit(text[i + 1])));
  }
  return out;
}

// `dsekp edge send`: asks the running daemon to seal and publish one downlink frame. Exit 0 when
// sent, 75 (EX_TEMPFAIL) when the edge still holds it for an offline device at --timeout, 1
// when refused or expired.
int run_send(SendArgs a, const CLI::App& cmd) {
  if (!a.config.empty()) {
    edge::daemon::EdgeDaemonOptions edge_options;
    std::string broker;
    edge::daemon::read_config_file(a.config, edge_options, broker);
    if (cmd.count("--broker") == 0) a.broker = broker;
    if (cmd.count("--db") == 0) a.db = edge_options.registry_db;
    if (cmd.count("--prefix") == 0) a.prefix = edge_options.topic_prefix;
  }
  if (a.broker.empty())
    throw UsageError("--broker is required (on the command line or in --config)");
  if (!a.password_file.empty()) {
    if (const auto s = edge::read_password_file(a.password_file, a.password); !s.ok())
      throw std::runtime_error("--password-file " + s.message());
  }
  if (const char* env = std::getenv("DSEKP_BROKER_PASSWORD");
      env != nullptr && a.password.empty() && !a.username.empty())
    a.password = env;
  edge::admin::AdminClientOptions o;
  parse_broker(a.broker, o.host, o.port);
  o.topic_prefix = a.prefix;
  if (a.timeout_s <= 0 || a.timeout_s > 3600) throw UsageError("--timeout: 0 < S <= 3600");
  o.timeout = std::chrono::milliseconds(static_cast<long long>(a.timeout_s * 1000));
  // The registry holds the admin key every request is signed with (the edge refuses the rest).
  if (a.db.empty())
    throw UsageError("--db is required: the registry holds the admin key the edge checks");
  std::unique_ptr<edge::DeviceRegistry> registry;
  if (const auto s = edge::DeviceRegistry::open(a.db, edge::OpenMode::existing_only, registry);
      !s.ok())
    throw std::runtime_error("registry " + a.db + ": " + s.message());
  edge::admin::AdminKey key{};
  if (const auto s = registry->admin_key(key); !s.ok())
    throw std::runtime_error("registry " + a.db + ": " + s.message());
  // The deployment's prefix, which the edge uses too, unless --prefix names one.
  if (o.topic_prefix.empty()) {
    if (const auto s = registry->topic_prefix(o.topic_prefix); !s.ok())
      throw std::runtime_error("registry " + a.db + ": " + s.message());
    a.prefix = o.topic_prefix;
  }
  if (!a.username.empty()) {
    o.username = a.username;
    o.password = a.password;
  } else {
    // A downlink account from the registry (`dsekp keys broker-config` adds one). Never the
    // edge's own: the broker binds client ids to user names, so logging in as the edge would
    // take over the edge's session.
    std::vector<edge::ServiceAccount> accounts;
    if (const auto s = registry->accounts(accounts); !s.ok())
      throw std::runtime_error("registry " + a.db + ": " + s.message());
    for (const auto& account : accounts) {
      if (account.role != edge::AccountRole::downlink) continue;
      o.username = account.login.username;
      o.password = account.login.password;
      break;
    }
  }
  edge::admin::DownlinkRequest request;
  request.dev_id = a.dev_id;
  if (a.hex) {
    request.payload = hex_bytes(a.payload);
  } else {
    request.payload.assign(a.payload.begin(), a.payload.end());
  }
  request.request_id = a.request_id;
  if (request.request_id.empty()) {
    std::vector<std::uint8_t> random(12);
    OpenSslRng rng;
    if (rng.fill(random) != Error::ok) throw std::runtime_error("no randomness for a request id");
    request.request_id = edge::to_hex(ByteView(random.data(), random.size()));
  }
  if (!edge::admin::valid_request_id(request.request_id))
    throw UsageError("--request-id: 1-64 of [A-Za-z0-9._-]");
  edge::admin::sign(
      key, a.prefix, request,
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count()));
  secure_wipe(key);

  edge::admin::DownlinkResult result;
  std::string error;
  // Each result on its own line as it comes: "queued" first for an offline device.
  const auto print = [](const edge::admin::DownlinkResult& r) {
    std::printf("%s\n", edge::admin::encode(r).c_str());
    std::fflush(stdout);
  };
  if (!edge::admin::request_downlink(o, request, result, error, print)) {
    std::fprintf(stderr, "dsekp edge send: %s\n", error.c_str());
    return 1;
  }
  switch (result.status) {
    case edge::admin::DownlinkStatus::sent:
      return 0;
    case edge::admin::DownlinkStatus::queued:
      std::fprintf(stderr,
                   "dsekp edge send: %s is offline; the edge holds the request and sends it when "
                   "the device is back (before its queue time runs out)\n",
                   request.dev_id.c_str());
      return 75;
    case edge::admin::DownlinkStatus::expired:
    case edge::admin::DownlinkStatus::refused:
      break;
  }
  std::fprintf(stderr, "dsekp edge send: %s: %s\n",
               edge::admin::downlink_status_name(result.status), result.reason.c_str());
  return 1;
}

// The daemon's options: the defaults, then the config file, then every flag that was given.
edge::daemon::EdgeDaemonOptions daemon_options(const EdgeArgs& a, const CLI::App& cmd) {
  edge::daemon::EdgeDaemonOptions o;
  std::string broker;
  if (!a.config.empty()) edge::daemon::read_config_file(a.config, o, broker);
  const auto given = [&cmd](const char* flag) { return cmd.count(flag) > 0; };
  const edge::daemon::EdgeDaemonOptions& f = a.options;
  if (given("--broker")) broker = a.broker;
  if (given("--db")) o.registry_db = f.registry_db;
  if (given("--state-db")) o.state_db = f.state_db;
  if (given("--downlink-journal")) o.downlink_journal = f.downlink_journal;
  if (given("--store")) o.store = f.store;
  if (given("--store-password-file")) o.store_password_file = f.store_password_file;
  if (const char* env = std::getenv("DSEKP_REDIS_PASSWORD");
      env != nullptr && o.store_password_file.empty())
    o.store_password = env;
  if (given("--shared-group")) o.shared_group = f.shared_group;
  if (given("--downlink-lane")) o.downlink_lane = f.downlink_lane;
  if (given("--session-cache-devices")) o.session_cache_devices = f.session_cache_devices;
  if (given("--logs-dir")) o.logs_dir = f.logs_dir;
  if (given("--username")) o.username = a.username;
  if (given("--password")) o.password = f.password;
  if (given("--password-file")) o.password_file = f.password_file;
  // The environment keeps the password out of argv (and so out of ps and /proc/PID/cmdline).
  if (const char* env = std::getenv("DSEKP_BROKER_PASSWORD");
      env != nullptr && o.password.empty() && o.password_file.empty())
    o.password = env;
  if (given("--client-id")) o.client_id = f.client_id;
  if (given("--metrics")) o.metrics = f.metrics;
  if (given("--prefix")) o.topic_prefix = f.topic_prefix;
  if (given("--max-skew")) o.max_skew_s = f.max_skew_s;
  if (given("--ready-file")) o.ready_file = f.ready_file;
  if (given("--init-burst")) o.init_burst = f.init_burst;
  if (given("--init-refill-ms")) o.init_refill_ms = f.init_refill_ms;
  if (given("--replay-window")) o.replay_window = f.replay_window;
  if (given("--batch-max")) o.batch_max = f.batch_max;
  if (given("--batch-time-ms")) o.batch_time_ms = f.batch_time_ms;
  if (given("--test-hold-ms")) o.test_hold_ms = f.test_hold_ms;
  if (given("--mqtt-version")) o.mqtt_version = f.mqtt_version;
  if (given("--tls-ca")) o.tls_ca = f.tls_ca;
  if (given("--tls-cert")) o.tls_cert = f.tls_cert;
  if (given("--tls-key")) o.tls_key = f.tls_key;
  if (a.tls_insecure) o.tls_insecure = true;
  // Checked by the flags' validators (log_choice), so these parses succeed.
  if (given("--log-format")) (void)edge::logging::parse_log_format(a.log_format, o.log_format);
  if (given("--log-level")) (void)edge::logging::parse_log_level(a.log_level, o.log_level);
  if (a.no_csv) o.csv = false;
  if (a.republish) o.republish = true;
  if (a.no_republish) o.republish = false;
  if (a.home_assistant) o.home_assistant = true;
  if (a.republish_retain) o.republish_retain = true;
  if (given("--republish-topic")) o.republish_topic = f.republish_topic;
  if (given("--downlink-queue-ttl")) o.downlink_queue_ttl_s = f.downlink_queue_ttl_s;
  if (given("--retention-days")) o.retention_days = f.retention_days;
  if (given("--device-offline-after")) o.device_offline_after_s = f.device_offline_after_s;
  if ((o.republish_retain || !o.republish_topic.empty()) && !o.republish)
    throw UsageError(
        "--republish-topic and --republish-retain shape the republish: they need "
        "--republish");
  if (o.republish) {
    if (const std::string why = edge::republish_base_problem(o.topic_prefix, o.republish_topic);
        !why.empty())
      throw UsageError("--republish-topic: " + why);
  }
  if (o.home_assistant && !o.republish)
    throw UsageError("--home-assistant announces the republished readings: it needs --republish");
  if (a.psk_baseline) o.psk_baseline = true;
  if (broker.empty()) throw UsageError("--broker is required (on the command line or in --config)");
  if (o.registry_db.empty()) throw UsageError("--db is required");
  parse_broker(broker, o.broker_host, o.broker_port);
  if (o.csv && o.logs_dir.empty()) throw UsageError("--logs-dir is required (or --no-csv)");
  if (!o.store.empty() && o.store != "sqlite" && o.store.rfind("redis://", 0) != 0)
    throw UsageError("--store: expected sqlite or redis://HOST[:PORT][/PREFIX], got \"" + o.store +
                     "\"");
  if (!o.shared_group.empty() && (o.mqtt_version == "3.1.1" || o.mqtt_version == "311"))
    throw UsageError(
        "--shared-group needs MQTT 5 shared subscriptions; it cannot be used with "
        "--mqtt-version 3.1.1");
  if (!o.shared_group.empty() && o.shared_group.find_first_of("/+#") != std::string::npos)
    throw UsageError("--shared-group: a group name may not contain '/', '+' or '#'");
  return o;
}

// A CLI11 validator from a log_options parser: the flag's error says what is accepted (exit 2).
template <typename Value>
CLI::Validator log_choice(bool (*parse)(std::string_view, Value&) noexcept,
                          std::string (*refused)(std::string_view), const std::string& names) {
  return CLI::Validator(
      [parse, refused](std::string& text) {
        Value value{};
        return parse(text, value) ? std::string() : refused(text);
      },
      names);
}

}  // namespace

void add_edge_command(CLI::App& app) {
  auto args = std::make_shared<EdgeArgs>();
  CLI::App* cmd = app.add_subcommand("edge", "Run the edge gateway daemon until SIGTERM/SIGINT");
  cmd->add_option("--config", args->config,
                  "TOML file with these options (keys with underscores; flags override it)");
  // Required for the daemon, checked in its callback (CLI11 would also demand them of `send`).
  cmd->add_option("--broker", args->broker, "MQTT broker HOST:PORT (required)");
  cmd->add_option("--db", args->options.registry_db,
                  "Device registry (from `dsekp keys`; required)");
  cmd->add_option("--state-db", args->options.state_db,
                  "Session state + telemetry database (default: <db>.state)");
  cmd->add_option("--downlink-journal", args->options.downlink_journal,
                  "The downlink seqs used, kept apart from the state so that no nonce is used "
                  "twice after the state is restored from an older copy (default: "
                  "<state-db>.downlinks; never restore it from a backup)");
  cmd->add_option(
      "--store", args->options.store,
      "Session states: sqlite (the state db, default) or redis://[USER@]HOST[:PORT][/PREFIX] "
      "shared by several edges");
  cmd->add_option("--store-password-file", args->options.store_password_file,
                  "With --store redis://USER@...: a file whose first line is USER's password "
                  "(or DSEKP_REDIS_PASSWORD)");
  cmd->add_option("--downlink-lane", args->options.downlink_lane,
                  "K/N: this edge's own index K among the N edges sharing one store; downlinks "
                  "use only seqs = K mod N, so that a store restored from an older copy cannot "
                  "make two edges seal under one nonce (default 0/1: one edge)")
      ->capture_default_str();
  cmd->add_option("--shared-group", args->options.shared_group,
                  "Share the uplink with the other edges of GROUP ($share/GROUP/..., MQTT 5)");
  cmd->add_option("--session-cache-devices", args->options.session_cache_devices,
                  "With --store redis: devices whose session keys stay in memory (at most about "
                  "0.75 KB each; 0: none)")
      ->check(CLI::Range(0u, 100'000'000u))
      ->capture_default_str();
  cmd->add_option("--logs-dir", args->options.logs_dir,
                  "Directory of server_logs_psk.csv / server_logs_dsekp.csv");
  cmd->add_option("--username", args->username,
                  "Broker user (default: the registry's edge account, else anonymous)");
  cmd->add_option("--password", args->options.password,
                  "Broker password (visible in ps: prefer --password-file or the "
                  "DSEKP_BROKER_PASSWORD environment variable)");
  cmd->add_option("--password-file", args->options.password_file,
                  "File whose first line is the broker password");
  cmd->add_option("--client-id", args->options.client_id, "MQTT client id (persistent session)")
      ->capture_default_str();
  cmd->add_option("--metrics", args->options.metrics, "Metrics endpoint HOST:PORT, or off")
      ->capture_default_str();
  cmd->add_option("--prefix", args->options.topic_prefix, "Topic prefix, e.g. site1/");
  cmd->add_option("--max-skew", args->options.max_skew_s,
                  "INIT freshness window in seconds (0: clockless devices)")
      ->capture_default_str();
  cmd->add_option("--ready-file", args->options.ready_file,
                  "Write this file (with the pid) once connected and subscribed");
  cmd->add_option("--init-burst", args->options.init_burst,
                  "INITs a device may send in a burst (token bucket capacity; 0: unlimited)")
      ->capture_default_str();
  cmd->add_option("--init-refill-ms", args->options.init_refill_ms,
                  "One more INIT allowed per this many ms (0: unlimited)")
      ->capture_default_str();
  cmd->add_option("--replay-window", args->options.replay_window, "Replay window size in frames")
      ->check(CLI::Range(1u, static_cast<unsigned>(ReplayWindow::kMaxSize)))
      ->capture_default_str();
  cmd->add_option("--batch-max", args->options.batch_max,
                  "Messages per store transaction and PUBACK burst (1: one commit per message)")
      ->check(CLI::Range(1u, 65535u))
      ->capture_default_str();
  cmd->add_option("--batch-time-ms", args->options.batch_time_ms,
                  "A burst of messages stops after MS and commits (0: no time limit)")
      ->check(CLI::Range(0u, 60000u))
      ->capture_default_str();
  cmd->add_option("--mqtt-version", args->options.mqtt_version,
                  "MQTT protocol: auto (5, else 3.1.1), 5 or 3.1.1")
      ->check(CLI::IsMember({"auto", "5", "3.1.1"}))
      ->capture_default_str();
  cmd->add_option("--tls-ca", args->options.tls_ca,
                  "TLS to the broker: CA certificate(s), PEM (default: plain TCP)");
  cmd->add_option("--tls-cert", args->options.tls_cert,
                  "TLS client certificate, PEM (with --tls-key)");
  cmd->add_option("--tls-key", args->options.tls_key, "TLS client key, PEM (with --tls-cert)");
  cmd->add_flag("--tls-insecure", args->tls_insecure,
                "Do not check the broker's host name (the chain is still verified)");
  cmd->add_option("--log-format", args->log_format,
                  "Log as text lines on stderr or to journald (the systemd journal)")
      ->check(log_choice(edge::logging::parse_log_format, edge::logging::log_format_error,
                         "text|journald"))
      ->capture_default_str();
  cmd->add_option("--log-level", args->log_level, "Least severe level logged (reloaded on SIGHUP)")
      ->check(log_choice(edge::logging::parse_log_level, edge::logging::log_level_error,
                         "trace|debug|info|warn|error"))
      ->capture_default_str();
  // Hidden (empty group): fault injection for the durability test only.
  cmd->add_option("--test-hold-ms", args->options.test_hold_ms, "")->group("");
  cmd->add_flag("--no-csv", args->no_csv, "Do not write the server CSV logs");
  cmd->add_flag("--republish", args->republish,
                "Republish every accepted reading IN CLEAR on BASE/{dev_id}, and availability on "
                "BASE/{dev_id}/availability and BASE/edge/{client-id}/availability: whoever the "
                "broker lets read BASE/# reads them (off by default)");
  cmd->add_flag("--no-republish", args->no_republish, "Do not republish (the default)");
  cmd->add_option("--republish-topic", args->options.republish_topic,
                  "BASE for --republish (default: {prefix}plain)");
  cmd->add_flag("--republish-retain", args->republish_retain,
                "With --republish: the broker retains each device's last reading and "
                "availability (it must allow retained messages: dsekp keys broker-config "
                "--retain)");
  cmd->add_option("--device-offline-after", args->options.device_offline_after_s,
                  "With --republish: a device is offline after this many seconds without an "
                  "accepted frame")
      ->check(CLI::Range(1u, 30u * 86400u))
      ->capture_default_str();
  cmd->add_option("--downlink-queue-ttl", args->options.downlink_queue_ttl_s,
                  "Seconds a downlink for an offline device is held for its next frame (at most "
                  "16 per device, 4096 in all; 0: sent at once, lost if the device is offline)")
      ->check(CLI::Range(0u, 7u * 86400u))
      ->capture_default_str();
  cmd->add_option("--retention-days", args->options.retention_days,
                  "Delete telemetry rows received more than this many days ago (0: keep them "
                  "all; the CSV logs rotate with logrotate)")
      ->check(CLI::Range(0u, 36'500u))
      ->capture_default_str();
  cmd->add_flag("--home-assistant", args->home_assistant,
                "With --republish: Home Assistant discovery configs (homeassistant/sensor/...), "
                "readings and availability retained (dsekp keys broker-config "
                "--home-assistant)");
  cmd->add_flag("--psk-baseline", args->psk_baseline,
                "Also serve the paper's static-PSK baseline on {prefix}psk/data (for the "
                "comparison experiment: no replay protection; off by default)");

  auto send = std::make_shared<SendArgs>();
  CLI::App* send_cmd = cmd->add_subcommand(
      "send", "Ask the running edge to send a downlink frame to a device (exit 0 when sent)");
  send_cmd->add_option("--config", send->config,
                       "The edge's TOML file: broker, db and prefix from it (flags override)");
  send_cmd->add_option("--broker", send->broker, "MQTT broker HOST:PORT (required)");
  send_cmd->add_option("--db", send->db,
                       "Registry (required): the admin key the request is signed with, and the "
                       "downlink account (else --username/--password)");
  send_cmd->add_option("--username", send->username, "Broker user (default: from --db)");
  send_cmd->add_option("--password", send->password,
                       "Broker password (visible in ps: prefer --password-file or "
                       "DSEKP_BROKER_PASSWORD)");
  send_cmd->add_option("--password-file", send->password_file,
                       "File whose first line is the broker password");
  send_cmd->add_option("--prefix", send->prefix, "Topic prefix of the edge, e.g. site1/");
  send_cmd->add_flag("--hex", send->hex, "PAYLOAD is hex, not text");
  send_cmd->add_option("--request-id", send->request_id, "Request id (default: random)");
  send_cmd
      ->add_option("--timeout", send->timeout_s,
                   "Seconds to wait for the final answer (a request held for an offline "
                   "device: exit 75 when it is still held then)")
      ->capture_default_str();
  send_cmd->add_option("DEV_ID", send->dev_id, "Device id")->required();
  send_cmd->add_option("PAYLOAD", send->payload, "What to send (text; hex with --hex)")->required();
  send_cmd->callback([send, send_cmd] {
    const int code = run_send(*send, *send_cmd);
    if (code != 0) std::exit(code);
  });

  cmd->callback([args, cmd, send_cmd] {
    if (send_cmd->parsed()) return;  // `dsekp edge send`: its own callback ran
    // Built again on SIGHUP: the file as it is then, with the flags still overriding it.
    const auto build = [args, cmd] { return daemon_options(*args, *cmd); };
    edge::daemon::EdgeDaemonOptions o = build();
    if (!args->config.empty()) o.reload = build;
    const int code = edge::daemon::run_edge_daemon(o);
    if (code != 0) std::exit(code);
  });
}

}  // namespace dsekp::cli
