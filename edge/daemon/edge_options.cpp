// The table of the edge daemon's plain options (see edge_options.hpp).
#include "edge/daemon/edge_options.hpp"

#include <array>

namespace dsekp::edge::daemon {
namespace {

using O = EdgeDaemonOptions;
using namespace std::string_view_literals;

// "311": an alias of 3.1.1 (edge/mqtt parse_mqtt_version) that config files may hold.
constexpr std::array kMqttVersions = {"auto"sv, "5"sv, "3.1.1"sv, "311"sv};
constexpr std::uint32_t kDay = 86400;

// Struct order is --help order.
const OptionSpec kSpecs[] = {
    {.key = "db",
     .help = "Device registry (from `dsekp keys`; required)",
     .member = &O::registry_db},
    {.key = "state_db",
     .help = "Session state + telemetry database (default: <db>.state)",
     .member = &O::state_db},
    {.key = "downlink_journal",
     .help = "The downlink seqs used, kept apart from the state so that no nonce is used twice "
             "after the state is restored from an older copy (default: <state-db>.downlinks; "
             "never restore it from a backup)",
     .member = &O::downlink_journal},
    {.key = "store",
     .help = "Session states: sqlite (the state db, default), "
             "redis://[USER@]HOST[:PORT][/PREFIX] shared by several edges, or a Redis Cluster: "
             "redis+cluster://[USER@]HOST[:PORT],...[/PREFIX]",
     .member = &O::store},
    {.key = "store_password_file",
     .help = "With --store redis://USER@...: a file whose first line is USER's password (or "
             "DSEKP_REDIS_PASSWORD)",
     .member = &O::store_password_file},
    {.key = "downlink_lane",
     .help = "K/N: this edge's own index K among the N edges sharing one store; downlinks use "
             "only seqs = K mod N, so that a store restored from an older copy cannot make two "
             "edges seal under one nonce (default 0/1: one edge)",
     .member = &O::downlink_lane},
    {.key = "shared_group",
     .help = "Share the uplink with the other edges of GROUP ($share/GROUP/..., MQTT 5)",
     .member = &O::shared_group},
    {.key = "session_cache_devices",
     .help = "Devices whose sessions stay in memory (--store redis: their uplink keys, at most "
             "about 0.75 KB each; SQLite: their states, about 3.6 KB each; 0: none)",
     .member = &O::session_cache_devices,
     .max = 100'000'000},
    {.key = "logs_dir",
     .help = "Directory of server_logs_psk.csv / server_logs_dsekp.csv",
     .member = &O::logs_dir},
    {.key = "password",
     .help = "Broker password (visible in ps: prefer --password-file or the "
             "DSEKP_BROKER_PASSWORD environment variable)",
     .member = &O::password},
    {.key = "password_file",
     .help = "File whose first line is the broker password",
     .member = &O::password_file},
    {.key = "client_id", .help = "MQTT client id (persistent session)", .member = &O::client_id},
    {.key = "metrics", .help = "Metrics endpoint HOST:PORT, or off", .member = &O::metrics},
    {.key = "prefix", .help = "Topic prefix, e.g. site1/", .member = &O::topic_prefix},
    {.key = "max_skew",
     .help = "INIT freshness window in seconds (0: clockless devices)",
     .member = &O::max_skew_s,
     .reload = OptionReload::sighup},
    {.key = "ready_file",
     .help = "Write this file (with the pid) once connected and subscribed",
     .member = &O::ready_file},
    {.key = "init_burst",
     .help = "INITs a device may send in a burst (token bucket capacity; 0: unlimited)",
     .member = &O::init_burst,
     .reload = OptionReload::sighup},
    {.key = "init_refill_ms",
     .help = "One more INIT allowed per this many ms (0: unlimited)",
     .member = &O::init_refill_ms,
     .reload = OptionReload::sighup},
    {.key = "replay_window",
     .help = "Replay window size in frames",
     .member = &O::replay_window,
     .min = 1,
     .max = ReplayWindow::kMaxSize,
     .reload = OptionReload::sighup},
    {.key = "ratchet_lookahead",
     .help = "Ratcheting devices: how many secrets past the stored one an INIT is tried under "
             "(how far back a restored state may be; each costs a wrong INIT one more step)",
     .member = &O::ratchet_lookahead,
     .min = 1,
     .max = kMaxRatchetLookahead,
     .reload = OptionReload::sighup},
    {.key = "rejection_lines_per_second",
     .help = "Rejection log lines per second at most (the rest are counted)",
     .member = &O::rejection_lines_per_second,
     .min = 1,
     .max = 1'000'000,
     .reload = OptionReload::sighup,
     .on_command_line = false},
    {.key = "batch_max",
     .help = "Messages per store transaction and PUBACK burst (1: one commit per message)",
     .member = &O::batch_max,
     .min = 1,
     .max = 65535},
    {.key = "batch_time_ms",
     .help = "A burst of messages stops after MS and commits (0: no time limit)",
     .member = &O::batch_time_ms,
     .max = 60'000},
    {.key = "batch_wait_ms",
     .help = "A burst that owes no device an answer waits up to MS for more messages before it "
             "commits (fewer commits at moderate load; PUBACKs up to MS later; 0: no wait)",
     .member = &O::batch_wait_ms,
     .max = 1'000},
    {.key = "mqtt_version",
     .help = "MQTT protocol: auto (5, else 3.1.1), 5 or 3.1.1",
     .member = &O::mqtt_version,
     .choices = kMqttVersions},
    {.key = "mqtt_client",
     .help = "MQTT client: libmosquitto (MQTT 5 or 3.1.1, TLS) or builtin (the edge's own MQTT 5 "
             "client, plain TCP only: fewer system calls per message)",
     .member = &O::mqtt_client,
     .choices = kMqttClients},
    {.key = "amqp",
     .help = "Consume the uplink from a RabbitMQ quorum queue over AMQP 0-9-1 at these nodes "
             "(HOST[:PORT][,HOST[:PORT]...], tried in turn) instead of MQTT subscriptions: a "
             "clustered broker tier; devices still speak MQTT to RabbitMQ's MQTT plugin",
     .member = &O::amqp_nodes},
    {.key = "amqp_queue",
     .help = "With --amqp: the quorum queue (declared by the edge; edges sharing it share the "
             "uplink, with --store redis)",
     .member = &O::amqp_queue},
    {.key = "tls_ca",
     .help = "TLS to the broker: CA certificate(s), PEM (default: plain TCP)",
     .member = &O::tls_ca},
    {.key = "tls_cert",
     .help = "TLS client certificate, PEM (with --tls-key)",
     .member = &O::tls_cert},
    {.key = "tls_key", .help = "TLS client key, PEM (with --tls-cert)", .member = &O::tls_key},
    {.key = "tls_insecure",
     .help = "Do not check the broker's host name (the chain is still verified)",
     .member = &O::tls_insecure},
    {.key = "allow_unverified_libmosquitto",
     .help = "Start even if the libmosquitto at run time is not 2.0.11, the release in which "
             "the edge's acknowledge-after-commit was verified (check a new one with the kill "
             "tests first)",
     .member = &O::allow_unverified_libmosquitto},
    // Fault injection for the durability test only (test_hold.hpp): a hidden flag.
    {.key = "test_hold_ms",
     .help = "",
     .member = &O::test_hold_ms,
     .reload = OptionReload::never,
     .in_config_file = false},
    // The command line turns it off with --no-csv.
    {.key = "csv",
     .help = "Write the server CSV logs",
     .member = &O::csv,
     .on_command_line = false},
    {.key = "republish",
     .help = "Republish every accepted reading IN CLEAR on BASE/{dev_id}, and availability on "
             "BASE/{dev_id}/availability and BASE/edge/{client-id}/availability: whoever the "
             "broker lets read BASE/# reads them (off by default)",
     .member = &O::republish},
    {.key = "republish_topic",
     .help = "BASE for --republish (default: {prefix}plain)",
     .member = &O::republish_topic},
    {.key = "republish_retain",
     .help = "With --republish: the broker retains each device's last reading and availability "
             "(it must allow retained messages: dsekp keys broker-config --retain)",
     .member = &O::republish_retain},
    {.key = "device_offline_after",
     .help = "With --republish: a device is offline after this many seconds without an accepted "
             "frame",
     .member = &O::device_offline_after_s,
     .min = 1,
     .max = 30 * kDay},
    {.key = "downlink_queue_ttl",
     .help = "Seconds a downlink for an offline device is held for its next frame (at most 16 "
             "per device, 4096 in all; 0: sent at once, lost if the device is offline)",
     .member = &O::downlink_queue_ttl_s,
     .max = 7 * kDay},
    {.key = "retention_days",
     .help = "Delete telemetry rows received more than this many days ago (0: keep them all; "
             "the CSV logs rotate with logrotate)",
     .member = &O::retention_days,
     .max = 36'500},
    {.key = "home_assistant",
     .help = "With --republish: Home Assistant discovery configs (homeassistant/sensor/...), "
             "readings and availability retained (dsekp keys broker-config --home-assistant)",
     .member = &O::home_assistant},
    {.key = "psk_baseline",
     .help = "Also serve the paper's static-PSK baseline on {prefix}psk/data (for the "
             "comparison experiment: no replay protection; off by default)",
     .member = &O::psk_baseline},
};

}  // namespace

std::span<const OptionSpec> edge_option_specs() noexcept {
  return kSpecs;
}

std::string flag_of(const OptionSpec& spec) {
  std::string flag = "--" + std::string(spec.key);
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

void copy_option(const OptionSpec& spec, const EdgeDaemonOptions& from, EdgeDaemonOptions& to) {
  std::visit([&](auto member) { to.*member = from.*member; }, spec.member);
}

bool option_differs(const OptionSpec& spec, const EdgeDaemonOptions& a,
                    const EdgeDaemonOptions& b) {
  return std::visit([&](auto member) { return a.*member != b.*member; }, spec.member);
}

}  // namespace dsekp::edge::daemon
