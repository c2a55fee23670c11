// `dsekp device --broker HOST:PORT --mode dsekp|psk --credentials FILE ...` (see
// device_command.hpp); the options are the contract's (issue 4, section 1) plus a few of ours
// for tests and slow links. The work is dsekp_device's run_device_fleet.
#include "device_command.hpp"

#include <cstdlib>
#include <memory>
#include <string>

#include "device/fleet_runner.hpp"

namespace dsekp::cli {
namespace {

// Options given as words; turned into the enums in the callback.
struct Names {
  std::string mode;
  std::string encoding = "json";
  std::string progress = "auto";
};

}  // namespace

void add_device_command(CLI::App& app) {
  auto o = std::make_shared<device::FleetOptions>();
  auto devices = std::make_shared<std::uint64_t>(0);
  auto rekey = std::make_shared<std::uint32_t>(0);
  auto names = std::make_shared<Names>();
  CLI::App* cmd = app.add_subcommand(
      "device",
      "Simulate N devices (DSEKP or the PSK baseline) in one process: the load generator");
  cmd->add_option("--broker", o->broker, "MQTT broker HOST:PORT (the file's broker is ignored)")
      ->required();
  cmd->add_option("--mode", names->mode, "dsekp, or psk (the paper's static-key baseline)")
      ->required()
      ->check(CLI::IsMember({"dsekp", "psk"}));
  cmd->add_option("--credentials", o->credentials,
                  "JSON from `dsekp keys add`: one object or an array of them")
      ->required();
  cmd->add_option("--encoding", names->encoding, "Wire encoding: json (the paper's) or compact")
      ->check(CLI::IsMember({"json", "compact"}))
      ->capture_default_str();
  cmd->add_option("--devices", *devices, "Devices to simulate (default: every device in the file)");
  cmd->add_option("--count", o->count, "DATA frames per device; 0 = until --duration-s or a signal")
      ->capture_default_str();
  cmd->add_option("--interval-ms", o->interval_ms, "Interval between DATA frames of a device")
      ->capture_default_str();
  cmd->add_option("--duration-s", o->duration_s, "Stop after this many seconds (0 = no limit)")
      ->capture_default_str();
  cmd->add_option("--logs-dir", o->logs_dir,
                  "Write client_logs_{psk,dsekp}.csv (and client_handshakes_dsekp.csv) here");
  cmd->add_option("--ratchet-dir", o->ratchet_dir,
                  "Where devices provisioned with `keys add --ratchet` keep their secret (one "
                  "file each, replaced after every session; kept across runs and reboots)");
  cmd->add_option("--reset-every", o->reset_every,
                  "Reboot each device after every K DATA frames (0 = never; DSEKP only)")
      ->capture_default_str();
  cmd->add_option("--reset-prob", o->reset_prob,
                  "After each DATA frame reboot with this probability (DSEKP only)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the sensor model, resets and start offsets")
      ->capture_default_str();
  cmd->add_option("--qos", o->qos, "MQTT QoS of every publish: 0 or 1")->capture_default_str();
  cmd->add_option("--connect-rate", o->connect_rate, "New connections per second")
      ->capture_default_str();
  cmd->add_option("--rekey-at-seq", *rekey,
                  "Start a new session at this seq (default: the protocol's, 0xFFFF0000)");
  cmd->add_option("--summary-json", o->summary_json, "Also write the summary as JSON here");
  cmd->add_option("--progress", names->progress,
                  "Live line on stderr: auto (when a terminal), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->add_flag("--anonymous", o->anonymous,
                "Ignore the broker logins in the file (a broker without accounts)");
  // Ours.
  cmd->add_option("--keepalive-s", o->keepalive_s, "MQTT keepalive (0 = none)")
      ->capture_default_str();
  cmd->add_option("--drain-timeout-ms", o->drain_timeout_ms,
                  "At the end, how long to wait for outstanding PUBACKs")
      ->capture_default_str();
  cmd->add_option("--give-up-s", o->give_up_s,
                  "A device without a broker connection for this long gives up")
      ->capture_default_str();
  cmd->add_option("--max-handshake-failures", o->max_handshake_failures,
                  "A device gives up after this many handshakes in a row without a valid ACK")
      ->capture_default_str();
  cmd->add_option("--retransmit-initial-ms", o->retransmit_initial_ms,
                  "First INIT retransmission delay (doubles each time)")
      ->capture_default_str();
  cmd->add_option("--retransmit-max-ms", o->retransmit_max_ms, "Largest retransmission delay")
      ->capture_default_str();
  cmd->add_option("--init-max-age-ms", o->init_max_age_ms,
                  "Abandon an unanswered INIT this long after its first transmission")
      ->capture_default_str();

  cmd->callback([o, devices, rekey, names, cmd] {
    device::FleetOptions options = *o;
    options.mode = names->mode == "psk" ? Mode::psk : Mode::dsekp;
    options.encoding = names->encoding == "compact" ? Encoding::compact : Encoding::json;
    options.progress = names->progress == "on"    ? device::ProgressMode::on
                       : names->progress == "off" ? device::ProgressMode::off
                                                  : device::ProgressMode::automatic;
    if (cmd->count("--devices") > 0) options.devices = *devices;
    if (cmd->count("--rekey-at-seq") > 0) options.rekey_at_seq = *rekey;
    const int code = device::run_device_fleet(options);
    if (code != 0) std::exit(code);
  });
}

}  // namespace dsekp::cli
