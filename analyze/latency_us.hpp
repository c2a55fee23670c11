// One-way latency at microsecond resolution (ours, docs/LOGS.md): the server log's `latency_ms`
// is whole milliseconds, so on loopback every latency is 0 or 1 ms and the modes cannot be told
// apart. When a run's client log has `sendts_us` and its server log `recvts_us`, each server row
// is joined to the client row of the same packet (run, dev_id, sessctr_id, seq) and
// recvts_us - sendts_us is its latency in µs. Both stamps are the system clock of one machine
// (the experiment runs device and edge side by side), so no clock offset enters.
//
// A row whose µs value is missing, malformed or disagrees with the ms column of the same instant
// is bad for this table only (log_files.cpp counts and lists it); it stays in every other figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "log_files.hpp"
#include "statistics.hpp"

namespace dsekp::analyze {

/// µs bad rows of one log that entered the table (for the report and summary.json).
struct MicroFileReport {
  std::string path;
  LogKind kind = LogKind::server;
  std::uint64_t bad_rows = 0;
  std::vector<BadRow> first_bad_rows;
};

/// Where the good server rows of the runs with both columns went. Every such row is counted in
/// exactly one of: n_before_outliers (has a latency), bad_recvts_us, no_client_row,
/// bad_sendts_us, ambiguous.
struct MicroLatencyResult {
  std::size_t runs = 0;               // runs of the mode
  std::size_t runs_with_columns = 0;  // runs whose server and client logs have the µs columns
  std::uint64_t server_rows = 0;      // good server rows (ms tables) of those runs
  std::uint64_t bad_recvts_us = 0;    // server rows with a bad recvts_us
  std::uint64_t bad_client_rows = 0;  // client rows with a bad sendts_us (lost or not)
  std::uint64_t no_client_row = 0;    // server rows whose packet the client log lacks
  std::uint64_t bad_sendts_us = 0;    // server rows whose client row has a bad sendts_us
  std::uint64_t ambiguous = 0;        // server rows whose packet the client log has twice or more
  std::uint64_t n_before_outliers = 0;
  std::uint64_t outliers_excluded = 0;  // latency above the outlier rule (outlier_ms x 1000)
  std::uint64_t negative = 0;           // recvts_us < sendts_us: kept (clock stepped back)
  std::vector<double> sorted;           // latencies in µs after the outlier rule, ascending
  Descriptive stats;                    // of `sorted`
  std::vector<MicroFileReport> files;   // the logs of those runs, in input order
};

/// DSEKP vs PSK on the µs latencies, with the tests of the ms comparison (analysis.hpp).
struct MicroComparison {
  std::optional<double> mean_difference_us;    // DSEKP - PSK
  std::optional<double> median_difference_us;  // DSEKP - PSK
  std::optional<TTest> t_test;                 // Welch, PSK - DSEKP (as the ms comparison)
  std::optional<RankSumTest> rank_sum;         // PSK vs DSEKP (as the ms comparison)
};

/// Joins the server stamps to the client stamps of the same packet key and adds the latencies
/// (recvts_us - sendts_us, in µs) to out.sorted (unsorted until finish_micro_latencies) and the
/// row counts to `out`. Keys must use the same stream indices on both sides (analysis.cpp).
/// Sorts both vectors in place. A client stamp of kNoMicros is a row whose sendts_us was bad.
void join_micro_latencies(std::vector<MicroStamp>& client, std::vector<MicroStamp>& server,
                          MicroLatencyResult& out);

/// Applies the outlier rule (outlier_ms <= 0: off), sorts and describes out.sorted.
void finish_micro_latencies(MicroLatencyResult& out, double outlier_ms);

/// Differences DSEKP - PSK of means and medians, Welch's t-test and the rank-sum test.
MicroComparison compare_micro_latencies(const MicroLatencyResult& psk,
                                        const MicroLatencyResult& dsekp);

}  // namespace dsekp::analyze
