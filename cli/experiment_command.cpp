// `dsekp experiment` (see experiment_command.hpp): option parsing only; the experiment itself is
// the dsekp_experiment library (experiment/).
#include "experiment_command.hpp"

#include <cstdlib>
#include <memory>

#include "experiment/experiment.hpp"

namespace dsekp::cli {

void add_experiment_command(CLI::App& app) {
  auto o = std::make_shared<experiment::ExperimentOptions>();
  CLI::App* cmd = app.add_subcommand(
      "experiment",
      "Run the paper's PSK-vs-DSEKP evaluation end to end (private broker, edge, devices, "
      "analysis) and write a report beside the paper's Tables 6-7");
  cmd->add_option("--out", o->out_dir,
                  "Results folder (must be new or empty; default results/<UTC timestamp>/)");
  cmd->add_option("--devices", o->devices, "Devices in the PSK and DSEKP runs (paper: 1 ESP32)")
      ->capture_default_str();
  cmd->add_option("--packets", o->packets, "DATA frames per device and mode (paper: ~6,500)")
      ->capture_default_str();
  cmd->add_option("--interval-ms", o->interval_ms,
                  "Interval between a device's frames (the paper's 2 s, 100x faster)")
      ->capture_default_str();
  cmd->add_flag("--paper-timing", o->paper_timing,
                "Use the paper's 2 s interval (about 3.6 h per mode with 6,500 packets)");
  cmd->add_option("--encoding", o->encoding, "Frame encoding (the paper's is json)")
      ->check(CLI::IsMember({"json", "compact"}))
      ->capture_default_str();
  cmd->add_option("--qos", o->qos, "MQTT QoS of the data frames (the paper's PubSubClient: 0)")
      ->check(CLI::IsMember({0, 1}))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the sensor model, resets and link emulator")
      ->capture_default_str();
  // Plain flags whose value is inverted in the callback: CLI11's "!--no-x" form shows as
  // "--no-x{false}" in --help.
  auto no_trial = std::make_shared<bool>(false);
  auto no_figures = std::make_shared<bool>(false);
  cmd->add_flag("--no-trial", *no_trial, "Skip the multi-session trial");
  cmd->add_option("--trial-devices", o->trial_devices, "Devices in the multi-session trial")
      ->capture_default_str();
  cmd->add_option("--trial-packets", o->trial_packets, "DATA frames per trial device")
      ->capture_default_str();
  cmd->add_option("--reset-prob", o->reset_prob,
                  "Trial: reset probability after each frame (default: 25 resets expected in "
                  "total, the middle of the paper's 20-30)");
  cmd->add_option("--reset-every", o->reset_every, "Trial: reset each device every K frames");
  cmd->add_option("--broker", o->broker,
                  "Use this existing broker (HOST:PORT, anonymous logins) instead of a private "
                  "Mosquitto");
  cmd->add_option(
      "--link", o->link,
      "Put `dsekp link` between devices and broker: a SPEC "
      "(delay=250ms,jitter=80ms,stall=0.5%), none, or paper-wifi (which uses the paper's "
      "2 s interval unless --interval-ms is given)");
  cmd->add_option("--mosquitto", o->mosquitto,
                  "Mosquitto executable (default: /usr/sbin, /usr/local/sbin, PATH)");
  cmd->add_flag("--no-figures", *no_figures, "Do not render the analysis figures");
  cmd->add_option("--edge-ready-timeout", o->edge_ready_timeout_s,
                  "Seconds to wait for the edge's ready file")
      ->capture_default_str();
  cmd->callback([o, cmd, no_trial, no_figures] {
    if (*no_trial) o->trial = false;
    if (*no_figures) o->figures = false;
    o->interval_given = cmd->count("--interval-ms") > 0;
    const int code = experiment::run_experiment(*o);
    std::fflush(nullptr);
    std::exit(code);
  });
}

}  // namespace dsekp::cli
