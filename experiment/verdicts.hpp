// "What reproduced and what did not": one verdict per claim of the paper's evaluation, computed
// from the measured numbers (dsekp analyze's summary.json of the main runs and of the trial) by a
// rule stated in the verdict itself. Nothing here is decided in advance: change the numbers and
// the verdicts change.
//
// The claims (paper sections 5.1-5.6):
//   latency_overhead   DSEKP's mean latency is ~27 % above PSK's (283.0 -> 360.0 ms)
//   latency_level      sub-second Wi-Fi latencies (PSK median 274 ms, >99 % within 1 s)
//   throughput         identical packet rate in both modes (1.00 pps each)
//   payload_overhead   DSEKP frames ~10 % larger (154.8 -> 170.8 B, +10.34 %)
//   reliability        >99.8 % delivery, no missing or duplicate sequence numbers
//   handshake_reinit   every re-initialisation after a reset succeeded in one INIT -> ACK
//                      (multi-session trials with 20-30 random resets)
//   handshake_latency  an INIT -> ACK handshake takes 185 ms on average
// A claim about the Wi-Fi link (latency level, handshake time) cannot be tested on loopback; the
// verdict then says so ("not testable here") and gives our figure anyway.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dsekp::experiment {

enum class Outcome { reproduced, partly, not_reproduced, not_testable };

/// "reproduced", "partly reproduced", "not reproduced", "not testable here".
std::string_view outcome_text(Outcome outcome);
/// "reproduced", "partly", "not_reproduced", "not_testable" (experiment.json).
std::string_view outcome_key(Outcome outcome);

struct Verdict {
  std::string id;     // latency_overhead, ...
  std::string claim;  // the paper's claim in plain words, with its section
  std::string paper;  // the paper's figure(s)
  std::string ours;   // our figure(s)
  std::string rule;   // how the outcome was decided
  Outcome outcome = Outcome::not_testable;
  std::string explanation;                                            // why, in plain words
  nlohmann::ordered_json figures = nlohmann::ordered_json::object();  // the numbers used
};

struct VerdictInputs {
  nlohmann::json main;    // summary.json of the main runs (PSK + DSEKP); null if missing
  nlohmann::json trial;   // summary.json of the trial; null without a trial
  bool link = false;      // devices reached the broker through `dsekp link`
  std::string link_name;  // "paper-wifi", "none", "custom"
  std::string encoding = "json";
  std::optional<std::uint64_t> trial_resets;  // from the trial device's summary
  int qos = 1;
  double configured_pps = 0;  // devices x 1000 / interval_ms of the main runs
};

/// Thresholds of the rules, in one place (the report prints them with each verdict).
struct VerdictRules {
  double overhead_low_factor = 0.5;   // a relative overhead "reproduces" within [x0.5, x2] ...
  double overhead_high_factor = 2.0;  // ... of the paper's
  double significance_p = 0.01;       // rank-sum p below this: the latency difference is real
  double rate_tolerance_pct = 5;      // packet rates "identical" within 5 %
  double min_active_seconds = 10;     // shorter runs: 1 s bins too coarse to compare rates
  double reliability_pct = 99.8;      // section 5.6 / Table 7
  double min_resets = 20;             // section 4.5: 20-30 resets
  double max_resets = 30;
  double subsecond_ms = 1000;  // section 5.2: >99 % within one second
};

std::vector<Verdict> compute_verdicts(const VerdictInputs& inputs, const VerdictRules& rules = {});

nlohmann::ordered_json to_json(const Verdict& verdict);

/// The number at a JSON pointer ("/modes/psk/latency_ms/mean"), if present and a number.
std::optional<double> number_at(const nlohmann::json& j, std::string_view pointer);

}  // namespace dsekp::experiment
