// `dsekp edge --broker HOST:PORT --db PATH --logs-dir DIR ...` and `dsekp edge send DEV_ID
// PAYLOAD` (see edge_command.hpp). Errors in the arguments go to stderr here (exit 2 for a bad
// flag value, 1 for a bad config file); once the daemon runs it logs through its logger
// (edge/logging/edge_logger.hpp, `--log-format`, `--log-level`).
#include "edge_command.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/hex.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/spec.hpp"
#include "dsekp/wiped_on_exit.hpp"
#include "edge/admin/admin_auth.hpp"
#include "edge/admin/admin_client.hpp"
#include "edge/daemon/edge_config_file.hpp"
#include "edge/daemon/edge_daemon.hpp"
#include "edge/daemon/edge_options.hpp"
#include "edge/daemon/unix_clock.hpp"
#include "edge/logging/log_options.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/republish_topics.hpp"
#include "edge/registry/secure_file.hpp"
#include "edge/registry/text_encoding.hpp"
#include "edge/store/redis/redis_store_url.hpp"
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
  std::string payload_file;  // instead of PAYLOAD: "-" is standard input
  bool hex = false;
  std::string request_id;
  double timeout_s = 10;
};

// The largest payload (in bytes; hex digits are twice as many) sent to the edge, which refuses
// more than kMaxPayloadSize by name: a request much larger would exceed the packet size the edge
// accepts (kMaxMqttPacketSize, with the seal in base64) and the broker would drop it unseen.
constexpr std::size_t kMaxSentPayload = 4 * kMaxPayloadSize;

// The payload from --payload-file, byte for byte (with --hex one final line break is dropped,
// as `echo` writes one); at most what run_send() would send.
std::string read_payload_file(const SendArgs& a) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (a.payload_file != "-") {
    file.open(a.payload_file, std::ios::binary);
    if (!file)
      throw UsageError("--payload-file: cannot read " + a.payload_file + ": " +
                       std::strerror(errno));
    in = &file;
  }
  const std::size_t limit = (a.hex ? 2 * kMaxSentPayload + 2 : kMaxSentPayload) + 1;
  std::string payload(limit, '\0');
  in->read(payload.data(), static_cast<std::streamsize>(payload.size()));
  payload.resize(static_cast<std::size_t>(in->gcount()));
  if (in->bad()) throw UsageError("--payload-file: cannot read " + a.payload_file);
  if (a.hex && !payload.empty() && payload.back() == '\n') {
    payload.pop_back();
    if (!payload.empty() && payload.back() == '\r') payload.pop_back();
  }
  return payload;
}

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
  if (text.size() % 2 != 0)
    throw std::runtime_error("the payload is not hex: odd number of digits");
  std::vector<std::uint8_t> out(text.size() / 2);
  if (!hex::decode(text, MutableByteView(out)))
    throw std::runtime_error("the payload is not hex: digit " +
                             std::to_string(hex::find_non_digit(text) + 1));
  return out;
}

// `dsekp edge send`: asks the running daemon to seal and publish one downlink frame. Exit 0 when
// sent, 75 (EX_TEMPFAIL) when the edge still holds it for an offline device at --timeout, 1
// when refused or expired.
int run_send(SendArgs a, const CLI::App& cmd) {
  const WipedOnExit wipe_argument{a.payload};  // this copy of PAYLOAD, if it was given
  if (const bool given = cmd.count("PAYLOAD") > 0; given == !a.payload_file.empty())
    throw UsageError(given ? "give the payload as PAYLOAD or with --payload-file, not both"
                           : "PAYLOAD or --payload-file is required");
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
  // The key every request is signed with, and the payload in clear below: wiped however this
  // returns.
  edge::admin::AdminKey key{};
  const WipedOnExit wipe_key{key};
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
  request.request_id = a.request_id;
  if (request.request_id.empty()) {
    std::vector<std::uint8_t> random(12);
    OpenSslRng rng;
    if (rng.fill(random) != Error::ok) throw std::runtime_error("no randomness for a request id");
    request.request_id = edge::to_hex(ByteView(random.data(), random.size()));
  }
  if (!edge::admin::valid_request_id(request.request_id))
    throw UsageError("--request-id: 1-64 of [A-Za-z0-9._-]");
  std::string payload = a.payload_file.empty() ? a.payload : read_payload_file(a);
  const WipedOnExit wipe_text{payload};
  const WipedOnExit wipe_plaintext{request.payload};
  if (payload.size() > (a.hex ? 2 * kMaxSentPayload : kMaxSentPayload))
    throw UsageError("the payload is larger than " + std::to_string(kMaxSentPayload) +
                     " bytes (a downlink holds at most " + std::to_string(kMaxPayloadSize) + ")");
  if (a.hex) {
    request.payload = hex_bytes(payload);
  } else {
    request.payload.assign(payload.begin(), payload.end());
  }
  edge::admin::sign(key, a.prefix, request, edge::daemon::unix_ms_now());
  // Nothing goes out unsigned: without a MAC there is no seal either, and the edge would only
  // answer "unauthenticated".
  if (request.mac_hex.empty()) throw std::runtime_error("cannot sign and seal the request");
  secure_wipe(request.payload);  // only the seal travels

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
  // The plain options (edge/daemon/edge_options.hpp): each flag given overrides the file,
  // a bool flag either way (--republish=false turns off the file's republish = true).
  for (const edge::daemon::OptionSpec& spec : edge::daemon::edge_option_specs()) {
    if (spec.on_command_line && given(edge::daemon::flag_of(spec).c_str()))
      edge::daemon::copy_option(spec, f, o);
  }
  if (const char* env = std::getenv("DSEKP_REDIS_PASSWORD");
      env != nullptr && o.store_password_file.empty())
    o.store_password = env;
  if (given("--username")) o.username = a.username;
  // The environment keeps the password out of argv (and so out of ps and /proc/PID/cmdline).
  if (const char* env = std::getenv("DSEKP_BROKER_PASSWORD");
      env != nullptr && o.password.empty() && o.password_file.empty())
    o.password = env;
  // Checked by the flags' validators (log_choice), so these parses succeed.
  if (given("--log-format")) (void)edge::logging::parse_log_format(a.log_format, o.log_format);
  if (given("--log-level")) (void)edge::logging::parse_log_level(a.log_level, o.log_level);
  if (a.no_csv) o.csv = false;
  if (a.no_republish) o.republish = false;
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
  // With --amqp the nodes are the broker.
  if (broker.empty() && o.amqp_nodes.empty())
    throw UsageError("--broker is required (on the command line or in --config), or --amqp");
  if (!broker.empty() && !o.amqp_nodes.empty())
    throw UsageError("--broker and --amqp: give one (the edge consumes from one broker tier)");
  if (o.registry_db.empty()) throw UsageError("--db is required");
  if (!broker.empty()) parse_broker(broker, o.broker_host, o.broker_port);
  if (o.csv && o.logs_dir.empty()) throw UsageError("--logs-dir is required (or --no-csv)");
  if (!o.store.empty() && o.store != "sqlite" && !edge::is_redis_store_url(o.store))
    throw UsageError(
        "--store: expected sqlite, redis://HOST[:PORT][/PREFIX] or "
        "redis+cluster://HOST[:PORT],...[/PREFIX], got \"" +
        o.store + "\"");
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
  cmd->add_option("--username", args->username,
                  "Broker user (default: the registry's edge account, else anonymous)");
  // The plain options, from their table (edge/daemon/edge_options.hpp).
  for (const edge::daemon::OptionSpec& spec : edge::daemon::edge_option_specs()) {
    if (!spec.on_command_line) continue;
    const std::string flag = edge::daemon::flag_of(spec);
    const std::string help(spec.help);
    CLI::Option* option = std::visit(
        [&](auto member) -> CLI::Option* {
          using Member = decltype(member);
          auto& value = args->options.*member;
          if constexpr (std::is_same_v<Member, bool edge::daemon::EdgeDaemonOptions::*>) {
            return cmd->add_flag(flag, value, help);
          } else if constexpr (std::is_same_v<Member,
                                              std::string edge::daemon::EdgeDaemonOptions::*>) {
            CLI::Option* o = cmd->add_option(flag, value, help);
            if (!spec.choices.empty())
              o->check(CLI::IsMember(
                  std::vector<std::string>(spec.choices.begin(), spec.choices.end())));
            if (!value.empty()) o->capture_default_str();
            return o;
          } else {
            CLI::Option* o = cmd->add_option(flag, value, help)->capture_default_str();
            if (spec.min > 0 || spec.max < std::numeric_limits<std::uint32_t>::max())
              o->check(CLI::Range(spec.min, spec.max));
            return o;
          }
        },
        spec.member);
    if (spec.help.empty()) option->group("");  // hidden
  }
  cmd->add_option("--log-format", args->log_format,
                  "Log as text lines on stderr or to journald (the systemd journal)")
      ->check(log_choice(edge::logging::parse_log_format, edge::logging::log_format_error,
                         "text|journald"))
      ->capture_default_str();
  cmd->add_option("--log-level", args->log_level, "Least severe level logged (reloaded on SIGHUP)")
      ->check(log_choice(edge::logging::parse_log_level, edge::logging::log_level_error,
                         "trace|debug|info|warn|error"))
      ->capture_default_str();
  cmd->add_flag("--no-csv", args->no_csv, "Do not write the server CSV logs");
  cmd->add_flag("--no-republish", args->no_republish, "Do not republish (the default)");

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
  send_cmd->add_option("--payload-file", send->payload_file,
                       "Read the payload from FILE ('-': standard input) instead of PAYLOAD, "
                       "which every user of the machine can read in ps");
  send_cmd->add_option("PAYLOAD", send->payload, "What to send (text; hex with --hex)");
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
