// Small pieces both end-to-end measurements report: percentile summaries (computed by the
// analysis library, analyze/statistics.hpp: R's type-7 quantiles), targets judged from the
// measured figures (never hard-coded verdicts), and the machine's load while measuring.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dsekp::bench::e2e {

struct Percentiles {
  std::size_t n = 0;
  std::optional<double> p50, p95, p99, mean, min, max;
};

/// Summary of `values` (any order) with analyze::describe.
Percentiles percentiles(std::span<const double> values);

/// One target: `value` compared against `limit` by `rule`.
struct Target {
  std::string id;               // "dsekp_p50_vs_psk_p50", "handshake_p50", ...
  std::string description;      // what is compared, in words, with the limit
  std::string unit;             // "us", "%"
  std::optional<double> value;  // empty: not measurable (e.g. no samples): counts as not met
  double limit = 0;
  bool met = false;
};

/// DSEKP p50 latency within max(5 % of the PSK p50, 10 us) of the PSK p50: met when
/// dsekp_p50 - psk_p50 <= that allowance (an overhead bound: DSEKP faster than PSK meets it).
Target latency_parity_target(const std::optional<double>& psk_p50_us,
                             const std::optional<double>& dsekp_p50_us);
/// p50 of the handshake latency under `limit_us` (1 ms on loopback).
Target handshake_target(const std::optional<double>& p50_us, double limit_us = 1000);
/// Delivery ratio of `what` equal to 100 % (every frame sent was logged by the edge).
Target delivery_target(const std::string& id, const std::string& what, std::uint64_t sent,
                       std::uint64_t received);

nlohmann::ordered_json to_json(const Percentiles& p);
nlohmann::ordered_json to_json(const Target& t);
/// "met" / "NOT met".
const char* verdict(const Target& t);

/// The 1-, 5- and 15-minute load averages (/proc/loadavg) and the CPU count.
struct MachineLoad {
  double load1 = 0, load5 = 0, load15 = 0;
  unsigned cpus = 0;
};
MachineLoad machine_load();
nlohmann::ordered_json to_json(const MachineLoad& l);

}  // namespace dsekp::bench::e2e
