// Fixture summaries in the schema of dsekp analyze's summary.json (analyze/summary_json.cpp), for
// the verdict and report tests: the paper's own numbers as a starting point, changed field by
// field by each test.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dsekp::experiment::fixtures {

inline nlohmann::json mode(double mean, double median, double p95, double p99, double payload,
                           double sent) {
  return {{"latency_ms",
           {{"n", sent},
            {"mean", mean},
            {"sd", 100.0},
            {"ci95_low", mean - 4},
            {"ci95_high", mean + 4},
            {"median", median},
            {"p95", p95},
            {"p99", p99},
            {"server_rows", sent}}},
          {"payload_bytes", {{"n", sent}, {"mean", payload}}},
          {"throughput",
           {{"packets", sent},
            {"active_seconds", 13000},
            {"pps_active", 0.5},
            {"pps_nonempty_bins", 1.0},
            {"bps_active", payload * 4},
            {"bps_nonempty_bins", payload * 8}}},
          {"reliability",
           {{"sent", sent},
            {"received", sent},
            {"lost", 0},
            {"duplicates", 0},
            {"unexpected", 0},
            {"delivery_pct", 100.0}}}};
}

/// Main runs that look like the paper's Tables 6-7.
inline nlohmann::json paper_like_main() {
  return {{"modes",
           {{"psk", mode(283.0, 274, 379, 444, 154.8, 6500)},
            {"dsekp", mode(360.0, 355, 607, 676, 170.8, 6500)}}},
          {"comparison",
           {{"mean_latency_change_pct", (360.0 - 283.0) / 283.0 * 100},
            {"payload_overhead_pct", 10.34},
            {"cohens_d", -0.486},
            {"cliffs_delta", -0.416},
            {"welch_t_test", {{"p", 9.35e-164}}},
            {"wilcoxon_rank_sum", {{"p", 1e-300}}}}},
          {"handshakes",
           {{"handshakes", 1},
            {"ok", 1},
            {"ok_first_attempt", 1},
            {"devices", 1},
            {"success_pct", 100.0},
            {"first_attempt_success_pct", 100.0},
            {"attempts_max", 1},
            {"latency_ms", {{"n", 1}, {"mean", 185.0}, {"median", 185.0}, {"p95", 185.0}}}}}};
}

/// A trial of 5 devices with 25 resets, every handshake on its first INIT.
inline nlohmann::json good_trial() {
  return {{"modes", {{"dsekp", mode(360.0, 355, 607, 676, 170.8, 1000)}}},
          {"handshakes",
           {{"handshakes", 30},
            {"ok", 30},
            {"ok_first_attempt", 30},
            {"devices", 5},
            {"success_pct", 100.0},
            {"first_attempt_success_pct", 100.0},
            {"attempts_max", 1},
            {"sessions_per_device_min", 5},
            {"sessions_per_device_max", 7},
            {"latency_ms", {{"n", 30}, {"mean", 185.0}, {"median", 180.0}, {"p95", 250.0}}}}}};
}

inline void set(nlohmann::json& j, const std::string& pointer, const nlohmann::json& value) {
  j[nlohmann::json::json_pointer(pointer)] = value;
}

}  // namespace dsekp::experiment::fixtures
