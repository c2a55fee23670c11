// The DSEKP paper's published results (Tables 6 and 7, section 5.6), copied from its text, for the
// optional `--paper` column beside our figures. Table 6 and Table 7 round the PSK mean
// differently (283.0 vs 282.92); both are kept as printed.
#pragma once

namespace dsekp::analyze {

struct PaperMode {
  // Table 6
  double mean_latency_ms;
  double sd_latency_ms;
  double ci95_low_ms;
  double ci95_high_ms;
  double median_latency_ms;
  double mean_payload_bytes;
  double throughput_bps;
  double reliability_pct;
  // Table 7
  double mean_latency_ms_t7;
  double p95_ms;
  double p99_ms;
  double packet_rate_pps;
};

struct PaperValues {
  PaperMode psk;
  PaperMode dsekp;
  double packets_per_mode;  // "over 6,500 packets"
  double outlier_ms;        // section 4.6
  double payload_overhead_pct;
  double t_test_p;
  double rank_sum_p;  // printed as 0
  double cohens_d;
  double cliffs_delta;
  double handshake_mean_ms;  // section 5.6
};

const PaperValues& paper_values();

}  // namespace dsekp::analyze
