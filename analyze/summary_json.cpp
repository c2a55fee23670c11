// summary.json writer (see summary_json.hpp).
#include "summary_json.hpp"

#include "paper_values.hpp"

namespace dsekp::analyze {
namespace {

using nlohmann::json;

template <typename T>
json opt(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json to_json(const Descriptive& d) {
  return {{"n", d.n},
          {"mean", opt(d.mean)},
          {"sd", opt(d.sd)},
          {"ci95_low", opt(d.ci95_low)},
          {"ci95_high", opt(d.ci95_high)},
          {"median", opt(d.median)},
          {"p95", opt(d.p95)},
          {"p99", opt(d.p99)},
          {"min", opt(d.min)},
          {"max", opt(d.max)}};
}

json to_json(const PayloadSummary& p) {
  return {{"n", p.n},
          {"total_bytes", p.total_bytes},
          {"mean", opt(p.mean)},
          {"sd", opt(p.sd)},
          {"min", opt(p.min)},
          {"max", opt(p.max)}};
}

json to_json(const ReliabilityCounts& c) {
  return {{"sent", c.sent},
          {"received", c.received},
          {"lost", c.lost},
          {"duplicates", c.duplicates},
          {"unexpected", c.unexpected},
          {"client_duplicate_rows", c.client_duplicate_rows},
          {"server_rows", c.server_rows},
          {"sessions", c.sessions},
          {"delivery_pct", opt(c.delivery_pct())}};
}

json to_json(const ThroughputSummary& t) {
  return {{"packets", t.packets},
          {"bytes", t.bytes},
          {"occupied_bins_1s", t.occupied_bins},
          {"active_seconds", t.active_seconds},
          {"max_packets_in_bin", t.max_packets_in_bin},
          {"pps_nonempty_bins", opt(t.pps_nonempty_bins)},
          {"bps_nonempty_bins", opt(t.bps_nonempty_bins)},
          {"pps_active", opt(t.pps_active)},
          {"bps_active", opt(t.bps_active)}};
}

json to_json(const FileReport& f) {
  json bad = json::array();
  for (const auto& row : f.first_bad_rows)
    bad.push_back({{"line", row.line}, {"reason", row.reason}});
  return {{"path", f.path},
          {"kind", kind_name(f.kind)},
          {"mode", mode_name(f.mode)},
          {"bytes", f.bytes},
          {"rows", f.rows},
          {"good_rows", f.good_rows},
          {"bad_rows", f.bad_rows},
          {"blank_lines", f.blank_lines},
          {"latency_checked_against_sendts", f.has_sendts},
          {"first_bad_rows", bad}};
}

json to_json(const ModeResult& m, double outlier_ms) {
  json sizes = json::array();
  for (const auto& [size, n] : m.payload.counts()) sizes.push_back({size, n});
  json latency = to_json(m.latency.stats);
  latency["server_rows"] = m.latency.rows;
  latency["outlier_threshold_ms"] = outlier_ms > 0 ? json(outlier_ms) : json(nullptr);
  latency["outliers_excluded"] = m.latency.outliers_excluded;
  latency["negative"] = m.latency.negative;
  json out = {{"runs", m.runs},
              {"latency_ms", latency},
              {"payload_bytes", to_json(m.payload_summary)},
              {"payload_size_counts", sizes},
              {"client_payload_bytes", to_json(m.client_payload_summary)},
              {"throughput", to_json(m.throughput)},
              {"reliability", nullptr}};
  if (m.reliability) {
    json r = to_json(m.reliability->total);
    r["runs"] = m.reliability_runs;
    r["devices"] = json::array();
    for (const auto& d : m.reliability->devices) {
      json one = to_json(d.counts);
      one["dev_id"] = d.dev_id;
      r["devices"].push_back(one);
    }
    out["reliability"] = r;
  }
  return out;
}

json to_json(const Comparison& c) {
  json t = nullptr;
  if (c.t_test) t = {{"t", c.t_test->t}, {"df", c.t_test->df}, {"p", c.t_test->p}};
  json w = nullptr;
  if (c.rank_sum)
    w = {{"w", c.rank_sum->w},
         {"z", c.rank_sum->z},
         {"p", c.rank_sum->p},
         {"method", "normal approximation with tie correction and continuity correction 0.5"}};
  return {{"sign", "PSK - DSEKP"},
          {"welch_t_test", t},
          {"wilcoxon_rank_sum", w},
          {"cohens_d", opt(c.cohens_d)},
          {"cliffs_delta", opt(c.cliffs_delta)},
          {"mean_latency_change_pct", opt(c.mean_latency_change_pct)},
          {"median_shift_ms", opt(c.median_shift_ms)},
          {"payload_overhead_pct", opt(c.payload_overhead_pct)}};
}

json to_json(const BadRow& row) {
  return {{"line", row.line}, {"reason", row.reason}};
}

json to_json(const MicroLatencyResult& m, double outlier_ms) {
  json out = to_json(m.stats);
  json files = json::array();
  for (const auto& f : m.files) {
    json bad = json::array();
    for (const auto& row : f.first_bad_rows) bad.push_back(to_json(row));
    files.push_back({{"path", f.path},
                     {"kind", kind_name(f.kind)},
                     {"bad_rows", f.bad_rows},
                     {"first_bad_rows", bad}});
  }
  out["runs"] = m.runs;
  out["runs_with_columns"] = m.runs_with_columns;
  out["server_rows"] = m.server_rows;
  out["server_rows_without_latency"] = {{"bad_recvts_us", m.bad_recvts_us},
                                        {"no_client_row", m.no_client_row},
                                        {"bad_sendts_us", m.bad_sendts_us},
                                        {"ambiguous_client_rows", m.ambiguous}};
  out["client_rows_bad_sendts_us"] = m.bad_client_rows;
  out["latencies_before_outliers"] = m.n_before_outliers;
  out["outlier_threshold_us"] = outlier_ms > 0 ? json(outlier_ms * 1000.0) : json(nullptr);
  out["outliers_excluded"] = m.outliers_excluded;
  out["negative"] = m.negative;
  out["files"] = files;
  return out;
}

json to_json(const MicroComparison& c) {
  json t = nullptr;
  if (c.t_test) t = {{"t", c.t_test->t}, {"df", c.t_test->df}, {"p", c.t_test->p}};
  json w = nullptr;
  if (c.rank_sum) w = {{"w", c.rank_sum->w}, {"z", c.rank_sum->z}, {"p", c.rank_sum->p}};
  return {{"mean_difference_us", opt(c.mean_difference_us)},
          {"median_difference_us", opt(c.median_difference_us)},
          {"sign", "differences DSEKP - PSK; t and W as in the ms comparison (PSK - DSEKP)"},
          {"welch_t_test", t},
          {"wilcoxon_rank_sum", w}};
}

// Present only when a mode had runs with both µs columns, so that logs without them give the
// summary.json they always gave.
std::optional<json> latency_us_json(const AnalysisResult& r) {
  const bool psk = r.psk && r.psk->latency_us;
  const bool dsekp = r.dsekp && r.dsekp->latency_us;
  if (!psk && !dsekp) return std::nullopt;
  json out = json::object();
  if (psk) out["psk"] = to_json(*r.psk->latency_us, r.options.outlier_ms);
  if (dsekp) out["dsekp"] = to_json(*r.dsekp->latency_us, r.options.outlier_ms);
  out["comparison"] = r.latency_us_comparison ? to_json(*r.latency_us_comparison) : json(nullptr);
  return out;
}

json to_json(const HandshakeSummary& h) {
  json devices = json::array();
  for (const auto& d : h.per_device)
    devices.push_back({{"dev_id", d.dev_id},
                       {"handshakes", d.handshakes},
                       {"ok", d.ok},
                       {"timeout", d.timeout},
                       {"rejected", d.rejected}});
  return {{"handshakes", h.handshakes},
          {"ok", h.ok},
          {"timeout", h.timeout},
          {"rejected", h.rejected},
          {"success_pct", opt(h.success_pct)},
          {"ok_first_attempt", h.ok_first_attempt},
          {"first_attempt_success_pct", opt(h.first_attempt_success_pct)},
          {"attempts_mean", opt(h.attempts_mean)},
          {"attempts_max", h.attempts_max},
          {"latency_ms", to_json(h.latency_ms)},
          {"devices", h.devices},
          {"sessions_per_device_mean", opt(h.sessions_per_device_mean)},
          {"sessions_per_device_min", opt(h.sessions_per_device_min)},
          {"sessions_per_device_max", opt(h.sessions_per_device_max)},
          {"per_device", devices}};
}

json paper_json() {
  const PaperValues& p = paper_values();
  const auto mode = [](const PaperMode& m) {
    return json{{"mean_latency_ms", m.mean_latency_ms},
                {"sd_latency_ms", m.sd_latency_ms},
                {"ci95_low_ms", m.ci95_low_ms},
                {"ci95_high_ms", m.ci95_high_ms},
                {"median_latency_ms", m.median_latency_ms},
                {"mean_payload_bytes", m.mean_payload_bytes},
                {"throughput_bps", m.throughput_bps},
                {"reliability_pct", m.reliability_pct},
                {"table7_mean_latency_ms", m.mean_latency_ms_t7},
                {"p95_ms", m.p95_ms},
                {"p99_ms", m.p99_ms},
                {"packet_rate_pps", m.packet_rate_pps}};
  };
  return {{"source", "DSEKP paper, Tables 6 and 7 and section 5.6"},
          {"psk", mode(p.psk)},
          {"dsekp", mode(p.dsekp)},
          {"packets_per_mode", p.packets_per_mode},
          {"outlier_ms", p.outlier_ms},
          {"payload_overhead_pct", p.payload_overhead_pct},
          {"t_test_p", p.t_test_p},
          {"rank_sum_p", p.rank_sum_p},
          {"cohens_d", p.cohens_d},
          {"cliffs_delta", p.cliffs_delta},
          {"handshake_mean_ms", p.handshake_mean_ms}};
}

}  // namespace

json summary_json(const AnalysisResult& result, const FiguresResult& figures, bool with_paper) {
  json files = json::array();
  for (const auto& f : result.files) files.push_back(to_json(f));
  json modes = json::object();
  if (result.psk) modes["psk"] = to_json(*result.psk, result.options.outlier_ms);
  if (result.dsekp) modes["dsekp"] = to_json(*result.dsekp, result.options.outlier_ms);
  json figure_list = json::array();
  for (const auto& f : figures.figures)
    figure_list.push_back(
        {{"name", f.name}, {"caption", f.caption}, {"rendered", f.rendered}, {"files", f.files}});
  json out = {
      {"generator", "dsekp analyze"},
      {"options",
       {{"outlier_ms",
         result.options.outlier_ms > 0 ? json(result.options.outlier_ms) : json(nullptr)},
        {"bad_rows_listed_per_file", result.options.bad_rows_listed}}},
      {"files", files},
      {"bad_rows_total", result.bad_rows},
      {"modes", modes},
      {"comparison", result.comparison ? to_json(*result.comparison) : json(nullptr)},
      {"handshakes", result.handshakes ? to_json(*result.handshakes) : json(nullptr)},
      {"figures",
       {{"requested", figures.requested},
        {"gnuplot_found", figures.gnuplot_found},
        {"message", figures.message},
        {"list", figure_list}}},
      {"timing_s", {{"reading", result.seconds_reading}, {"computing", result.seconds_computing}}}};
  if (with_paper) out["paper"] = paper_json();
  if (auto micros = latency_us_json(result)) out["latency_us"] = std::move(*micros);
  return out;
}

}  // namespace dsekp::analyze
