// Option checks and derived settings of `dsekp experiment` (see options.hpp).
#include "options.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dsekp::experiment {

std::vector<std::string> finalize_options(ExperimentOptions& o) {
  const auto bad = [](const std::string& message) { throw std::invalid_argument(message); };
  std::vector<std::string> notes;
  if (o.paper_timing) {
    if (o.interval_given)
      bad("--paper-timing sets the interval to the paper's 2000 ms: do not also give "
          "--interval-ms");
    o.interval_ms = kPaperIntervalMs;
  }
  // paper-wifi's stalls are drawn per relayed chunk and its jitter delays frames within one TCP
  // connection in order: both are calibrated for one frame every 2 s. At 20 ms the stalls come
  // 100 times as often and frames queue behind each other's delays (latencies of seconds).
  if (o.link == "paper-wifi") {
    if (!o.interval_given && !o.paper_timing) {
      o.interval_ms = kPaperIntervalMs;
      notes.push_back(
          "--link paper-wifi uses the paper's 2000 ms interval (it is calibrated for "
          "it): " +
          std::to_string(o.packets) + " packets take about " +
          std::to_string(o.packets * kPaperIntervalMs / 60000) +
          " min per mode; --packets 300 gives 10 min");
    } else if (o.interval_ms < 1000) {
      notes.push_back("--link paper-wifi is calibrated for the paper's 2000 ms interval; at " +
                      std::to_string(o.interval_ms) +
                      " ms its stalls come far more often and frames queue behind each other's "
                      "delays, so latencies will not be the paper's");
    }
  }
  if (o.devices < 1) bad("--devices must be at least 1");
  if (o.packets < 1) bad("--packets must be at least 1");
  if (o.interval_ms < 1) bad("--interval-ms must be at least 1");
  if (o.encoding != "json" && o.encoding != "compact")
    bad("--encoding must be json or compact, not \"" + o.encoding + "\"");
  if (o.qos != 0 && o.qos != 1) bad("--qos must be 0 or 1");
  if (o.trial) {
    if (o.trial_devices < 1) bad("--trial-devices must be at least 1 (or --no-trial)");
    if (o.trial_packets < 1) bad("--trial-packets must be at least 1 (or --no-trial)");
  }
  if (o.reset_prob && (!std::isfinite(*o.reset_prob) || *o.reset_prob < 0 || *o.reset_prob > 1))
    bad("--reset-prob must be between 0 and 1");
  if (o.reset_prob && o.reset_every > 0) bad("give --reset-prob or --reset-every, not both");
  if (o.edge_ready_timeout_s < 1) bad("--edge-ready-timeout must be at least 1 s");
  return notes;
}

double effective_reset_prob(const ExperimentOptions& o) {
  if (o.reset_prob) return *o.reset_prob;
  if (o.reset_every > 0) return 0;
  const double frames = static_cast<double>(o.trial_devices) * static_cast<double>(o.trial_packets);
  return frames > 0 ? std::min(1.0, kTargetTrialResets / frames) : 0;
}

double expected_trial_resets(const ExperimentOptions& o) {
  if (o.reset_every > 0)
    return static_cast<double>(o.trial_devices) *
           std::floor(static_cast<double>(o.trial_packets) / static_cast<double>(o.reset_every));
  return effective_reset_prob(o) * static_cast<double>(o.trial_devices) *
         static_cast<double>(o.trial_packets);
}

}  // namespace dsekp::experiment
