// The whole analysis: reads every input log (in parallel, one file per thread), then computes per
// mode the latency statistics (after the outlier rule), payload sizes, throughput and reliability,
// PSK vs DSEKP tests and effect sizes, and the multi-session trial summary. The report, JSON and
// figure writers only format an AnalysisResult.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "handshakes.hpp"
#include "inputs.hpp"
#include "latency_us.hpp"
#include "log_files.hpp"
#include "payload.hpp"
#include "reliability.hpp"
#include "statistics.hpp"
#include "throughput.hpp"

namespace dsekp::analyze {

struct AnalysisOptions {
  // The paper's rule (section 4.6): latencies above 10 s are excluded from the latency statistics
  // and counted. 0 turns the rule off.
  double outlier_ms = 10000;
  std::size_t bad_rows_listed = 20;  // per file
  unsigned threads = 0;              // 0: one per core
};

struct LatencyResult {
  std::uint64_t rows = 0;               // good server rows
  std::uint64_t outliers_excluded = 0;  // latency_ms > outlier_ms
  std::uint64_t negative = 0;           // latency_ms < 0: kept (device clock ahead of the edge)
  std::vector<double> sorted;           // after the outlier rule, ascending
  Descriptive stats;                    // of `sorted`
};

struct ModeResult {
  Mode mode = Mode::psk;
  std::size_t runs = 0;
  LatencyResult latency;
  PayloadHistogram payload;  // server rows: packets as received
  PayloadSummary payload_summary;
  PayloadSummary client_payload_summary;  // client rows: packets as sent (n = 0 without)
  ThroughputSummary throughput;
  std::vector<std::vector<SecondCount>> bins;  // per run
  std::size_t reliability_runs = 0;            // runs with a client log
  std::optional<Reliability> reliability;      // over those runs
  // Runs whose client and server logs both have the µs columns; empty when no run has them.
  std::optional<MicroLatencyResult> latency_us;
};

struct Comparison {
  std::optional<TTest> t_test;  // Welch, PSK - DSEKP
  std::optional<RankSumTest> rank_sum;
  std::optional<double> cohens_d;                 // pooled SD, PSK - DSEKP
  std::optional<double> cliffs_delta;             // P(PSK > DSEKP) - P(PSK < DSEKP)
  std::optional<double> mean_latency_change_pct;  // (DSEKP - PSK) / PSK x 100
  std::optional<double> median_shift_ms;          // DSEKP - PSK
  std::optional<double> payload_overhead_pct;
};

struct AnalysisResult {
  AnalysisOptions options;
  std::vector<FileReport> files;  // in input order
  std::optional<ModeResult> psk;
  std::optional<ModeResult> dsekp;
  std::optional<Comparison> comparison;                  // both modes present
  std::optional<MicroComparison> latency_us_comparison;  // both modes have latency_us
  std::optional<HandshakeSummary> handshakes;
  std::uint64_t bad_rows = 0;  // over all files
  double seconds_reading = 0;
  double seconds_computing = 0;
};

/// Throws AnalyzeError on unusable inputs (see log_files.hpp); bad rows only end up counted.
AnalysisResult analyze_logs(const AnalysisInputs& inputs, const AnalysisOptions& options);

/// Removes latencies above `outlier_ms` (none if outlier_ms <= 0) and returns how many.
std::uint64_t apply_outlier_rule(std::vector<double>& latencies_ms, double outlier_ms);

/// The PSK vs DSEKP part alone (also used by the tests).
Comparison compare_modes(const ModeResult& psk, const ModeResult& dsekp);

}  // namespace dsekp::analyze
