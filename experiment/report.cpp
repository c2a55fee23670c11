// report.md and experiment.json of an experiment (see report.hpp).
#include "report.hpp"

#include <algorithm>
#include <sstream>

#include "analyze/paper_values.hpp"
#include "analyze/text_format.hpp"

namespace dsekp::experiment {
namespace {

using analyze::count;
using analyze::fixed;
using analyze::kMissing;
using analyze::p_value;
using analyze::signed_fixed;
using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;
using Opt = std::optional<double>;

bool has(const Json& j) {
  return j.is_object();
}

Opt at(const Json& j, const std::string& pointer) {
  return number_at(j, pointer);
}

std::string integer(const Opt& v) {
  return v ? count(static_cast<std::uint64_t>(std::max(0.0, *v))) : kMissing;
}

/// Decimals that show a latency: loopback means are fractions of a millisecond (the logged
/// latencies are whole milliseconds, but a mean of thousands of them is finer).
int latency_decimals(const Json& summary) {
  double m = 0;
  for (const char* mode : {"psk", "dsekp"})
    m = std::max(m, at(summary, std::string("/modes/") + mode + "/latency_ms/mean").value_or(0));
  return m == 0 ? 1 : (m < 1 ? 3 : (m < 10 ? 2 : 1));
}

class Writer {
 public:
  explicit Writer(const ReportInputs& in) : in_(in), dec_(latency_decimals(in.main_summary)) {}

  std::string write() {
    title();
    verdict_summary();
    problems();
    setup();
    table6();
    table7();
    trial();
    verdicts();
    runs();
    files();
    return out_.str();
  }

 private:
  std::string lat(const char* mode, const char* field) const {
    return fixed(at(in_.main_summary, std::string("/modes/") + mode + "/latency_ms/" + field),
                 dec_);
  }
  std::string num(const char* mode, const std::string& path, int decimals) const {
    return fixed(at(in_.main_summary, std::string("/modes/") + mode + path), decimals);
  }

  void title() {
    const auto& s = in_.setup;
    out_ << "# DSEKP experiment: PSK vs DSEKP, the paper's evaluation reproduced\n\n"
         << "Written by `dsekp experiment` (docs/EXPERIMENT.md). Run from " << s.started_utc
         << " to " << s.finished_utc << " (" << fixed(s.duration_s, 0) << " s).\n\n"
         << "Command:\n\n```\n"
         << s.command_line << "\n```\n\n"
         << "The detailed analysis (every statistic, figures, methods) is dsekp analyze's: "
            "[analysis/main/report.md](analysis/main/report.md)"
         << (s.trial ? " and [analysis/trial/report.md](analysis/trial/report.md)" : "")
         << "; machine-readable: `experiment.json`, `analysis/*/summary.json`.\n\n";
  }

  void verdict_summary() {
    out_ << "## Verdicts at a glance\n\n| Claim (paper) | Paper | Ours | Verdict |\n"
            "|---|---|---|---|\n";
    for (const auto& v : in_.verdicts)
      out_ << "| " << v.id << " | " << v.paper << " | " << v.ours << " | **"
           << outcome_text(v.outcome) << "** |\n";
    out_ << "\nEach verdict is computed from the measured numbers by the rule given with it in "
            "[What reproduced and what did not](#what-reproduced-and-what-did-not).\n\n";
  }

  void problems() {
    if (in_.problems.empty()) return;
    out_ << "## Problems during the run\n\n";
    for (const auto& p : in_.problems) out_ << "- " << p << "\n";
    out_ << "\n";
  }

  void setup() {
    const auto& s = in_.setup;
    const auto& m = s.machine;
    out_ << "## Setup\n\n| | This run | The paper (section 4) |\n|---|---|---|\n"
         << "| Machine | " << m.cpu_model << ", " << m.logical_cpus << " logical CPUs, "
         << count(m.memory_mib) << " MiB; " << m.os << " (" << m.kernel
         << ") | ESP32-DevKitC v4 client, Raspberry Pi 5 edge (Table 3) |\n"
         << "| Software | " << m.dsekp_version << ", " << m.compiler << "; " << m.openssl
         << " (edge), " << m.mbedtls
         << " (devices) | Python 3.11 edge, Arduino ESP32 core, mbedTLS "
            "2.28.7 (Table 4) |\n"
         << "| Broker | " << s.broker << " | Mosquitto 2.0.18 in Docker |\n"
         << "| Network | "
         << (s.link_name.empty()
                 ? std::string("loopback: devices, broker and edge on one machine")
                 : "devices reach the broker through `dsekp link --link " + s.link_spec + "` (" +
                       s.link_name + ": " + s.link_description + "); the edge connects directly")
         << " | 2.4 GHz Wi-Fi, one access point |\n"
         << "| Devices (main runs) | " << s.devices << " simulated (`dsekp device`) | 1 ESP32 |\n"
         << "| Packets per mode | " << count(s.packets) << " per device | ~6,500 |\n"
         << "| Interval | " << count(s.interval_ms) << " ms"
         << (s.paper_timing ? " (--paper-timing)" : " (accelerated; --paper-timing uses 2 s)")
         << " | 2 s |\n"
         << "| Encoding, MQTT QoS | " << s.encoding << ", QoS " << s.qos
         << " | JSON, PubSubClient (QoS 0) |\n"
         << "| Order | PSK run, then DSEKP run, same broker, edge, devices and seed (" << s.seed
         << ") | PSK and DSEKP runs (brokers on ports 1885 / 1884) |\n";
    if (s.trial) {
      std::string resets = s.reset_every > 0
                               ? "every " + count(s.reset_every) + " frames"
                               : "probability " + fixed(s.reset_prob, 4) + " after each frame";
      out_ << "| Multi-session trial | DSEKP, " << s.trial_devices << " devices x "
           << count(s.trial_packets) << " frames, resets " << resets << " (expected "
           << fixed(s.expected_resets, 0) << "); edge " << s.trial_edge_limits
           << " | 20-30 random resets |\n";
    } else {
      out_ << "| Multi-session trial | skipped (--no-trial) | 20-30 random resets |\n";
    }
    out_ << "\nDifferences that matter when reading the numbers: everything runs on one machine, "
            "so client and edge share a clock (no NTP offset enters the latencies, unlike the "
            "paper's); the devices are simulated on Linux with the mbedTLS backend an ESP32 "
            "uses, not an ESP32; without an emulated link there is no radio, so absolute "
            "latencies are loopback latencies.\n\n";
  }

  void table6() {
    const auto& p = analyze::paper_values();
    out_ << "## Table 6: summary statistics (ours beside the paper's)\n\n"
         << "| Metric | PSK | DSEKP | Paper PSK | Paper DSEKP |\n|---|---:|---:|---:|---:|\n";
    const auto sd = [&](const char* mode) { return lat(mode, "mean") + " ± " + lat(mode, "sd"); };
    const auto ci = [&](const char* mode) {
      return "[" + lat(mode, "ci95_low") + ", " + lat(mode, "ci95_high") + "]";
    };
    out_ << "| Mean latency (ms) | " << sd("psk") << " | " << sd("dsekp") << " | "
         << fixed(p.psk.mean_latency_ms, 1) << " ± " << fixed(p.psk.sd_latency_ms, 1) << " | "
         << fixed(p.dsekp.mean_latency_ms, 1) << " ± " << fixed(p.dsekp.sd_latency_ms, 1) << " |\n"
         << "| 95 % CI (ms) | " << ci("psk") << " | " << ci("dsekp") << " | ["
         << fixed(p.psk.ci95_low_ms, 1) << ", " << fixed(p.psk.ci95_high_ms, 1) << "] | ["
         << fixed(p.dsekp.ci95_low_ms, 1) << ", " << fixed(p.dsekp.ci95_high_ms, 1) << "] |\n"
         << "| Median latency (ms) | " << lat("psk", "median") << " | " << lat("dsekp", "median")
         << " | " << fixed(p.psk.median_latency_ms, 0) << " | "
         << fixed(p.dsekp.median_latency_ms, 0) << " |\n"
         << "| Mean payload (bytes) | " << num("psk", "/payload_bytes/mean", 1) << " | "
         << num("dsekp", "/payload_bytes/mean", 1) << " | " << fixed(p.psk.mean_payload_bytes, 1)
         << " | " << fixed(p.dsekp.mean_payload_bytes, 1) << " |\n"
         << "| Throughput (bps, non-empty 1 s bins) | "
         << num("psk", "/throughput/bps_nonempty_bins", 1) << " | "
         << num("dsekp", "/throughput/bps_nonempty_bins", 1) << " | "
         << fixed(p.psk.throughput_bps, 1) << " | " << fixed(p.dsekp.throughput_bps, 1) << " |\n"
         << "| Reliability (%) | " << num("psk", "/reliability/delivery_pct", 2) << " | "
         << num("dsekp", "/reliability/delivery_pct", 2) << " | " << fixed(p.psk.reliability_pct, 1)
         << " | " << fixed(p.dsekp.reliability_pct, 1) << " |\n"
         << "| Packets (server rows) | "
         << integer(at(in_.main_summary, "/modes/psk/latency_ms/server_rows")) << " | "
         << integer(at(in_.main_summary, "/modes/dsekp/latency_ms/server_rows"))
         << " | ~6,500 | ~6,500 |\n\n";
  }

  void table7() {
    const auto& p = analyze::paper_values();
    const Json& s = in_.main_summary;
    out_ << "## Table 7: PSK vs DSEKP trade-off (ours beside the paper's)\n\n"
         << "| Metric | PSK | DSEKP | Paper PSK | Paper DSEKP |\n|---|---:|---:|---:|---:|\n"
         << "| Mean latency (ms) | " << lat("psk", "mean") << " | " << lat("dsekp", "mean") << " | "
         << fixed(p.psk.mean_latency_ms_t7, 2) << " | " << fixed(p.dsekp.mean_latency_ms_t7, 2)
         << " |\n"
         << "| Median latency (ms) | " << lat("psk", "median") << " | " << lat("dsekp", "median")
         << " | " << fixed(p.psk.median_latency_ms, 2) << " | "
         << fixed(p.dsekp.median_latency_ms, 2) << " |\n"
         << "| Latency p95 / p99 (ms) | " << lat("psk", "p95") << " / " << lat("psk", "p99")
         << " | " << lat("dsekp", "p95") << " / " << lat("dsekp", "p99") << " | "
         << fixed(p.psk.p95_ms, 2) << " / " << fixed(p.psk.p99_ms, 2) << " | "
         << fixed(p.dsekp.p95_ms, 2) << " / " << fixed(p.dsekp.p99_ms, 2) << " |\n"
         << "| Mean payload (bytes) | " << num("psk", "/payload_bytes/mean", 1) << " | "
         << num("dsekp", "/payload_bytes/mean", 1) << " | " << fixed(p.psk.mean_payload_bytes, 1)
         << " | " << fixed(p.dsekp.mean_payload_bytes, 1) << " |\n"
         << "| Mean packet rate (pps, non-empty 1 s bins) | "
         << num("psk", "/throughput/pps_nonempty_bins", 2) << " | "
         << num("dsekp", "/throughput/pps_nonempty_bins", 2) << " | "
         << fixed(p.psk.packet_rate_pps, 2) << " | " << fixed(p.dsekp.packet_rate_pps, 2) << " |\n"
         << "| Payload overhead (%) | " << kMissing << " | "
         << fixed(at(s, "/comparison/payload_overhead_pct"), 2) << " | " << kMissing << " | "
         << fixed(p.payload_overhead_pct, 2) << " |\n"
         << "| t-test p / rank-sum p | " << kMissing << " | "
         << p_value(at(s, "/comparison/welch_t_test/p")) << " / "
         << p_value(at(s, "/comparison/wilcoxon_rank_sum/p")) << " | " << kMissing << " | "
         << p_value(p.t_test_p) << " / " << p_value(p.rank_sum_p) << " |\n"
         << "| Cohen's d / Cliff's Δ | " << kMissing << " | "
         << signed_fixed(at(s, "/comparison/cohens_d"), 3) << " / "
         << signed_fixed(at(s, "/comparison/cliffs_delta"), 3) << " | " << kMissing << " | "
         << signed_fixed(p.cohens_d, 3) << " / " << signed_fixed(p.cliffs_delta, 3) << " |\n\n"
         << "Signs as in the paper: PSK − DSEKP (negative: DSEKP slower).\n\n";
  }

  void trial() {
    const auto& s = in_.setup;
    out_ << "## Multi-session trial (section 5.6)\n\n";
    if (!s.trial) {
      out_ << "Skipped (--no-trial).\n\n";
      return;
    }
    const Json& t = in_.trial_summary;
    const DeviceRunRecord* run = nullptr;
    for (const auto& r : in_.runs)
      if (r.name == "trial") run = &r;
    const Opt resets = run ? at(run->summary, "/resets") : std::nullopt;
    out_ << "| | Ours | Paper |\n|---|---:|---:|\n"
         << "| Devices | " << s.trial_devices << " | 1 |\n"
         << "| Resets | " << integer(resets) << " | 20-30 |\n"
         << "| Handshakes (ok / all) | " << integer(at(t, "/handshakes/ok")) << " / "
         << integer(at(t, "/handshakes/handshakes")) << " | – |\n"
         << "| Succeeded on the first INIT | "
         << fixed(at(t, "/handshakes/first_attempt_success_pct"), 1)
         << " % | 100 % (\"within a single INIT → ACK\") |\n"
         << "| Handshake time mean / median / p95 (ms) | "
         << fixed(at(t, "/handshakes/latency_ms/mean"), 2) << " / "
         << fixed(at(t, "/handshakes/latency_ms/median"), 2) << " / "
         << fixed(at(t, "/handshakes/latency_ms/p95"), 2) << " | 185 (mean) |\n"
         << "| Sessions per device (min-max) | "
         << integer(at(t, "/handshakes/sessions_per_device_min")) << "-"
         << integer(at(t, "/handshakes/sessions_per_device_max")) << " | – |\n"
         << "| Delivery (%) | " << fixed(at(t, "/modes/dsekp/reliability/delivery_pct"), 2)
         << " | no missing or duplicate sequence numbers |\n"
         << "| Lost / duplicate frames | " << integer(at(t, "/modes/dsekp/reliability/lost"))
         << " / " << integer(at(t, "/modes/dsekp/reliability/duplicates")) << " | 0 / 0 |\n\n";
  }

  void verdicts() {
    out_ << "## What reproduced and what did not\n\n"
            "One paragraph per claim of the paper's evaluation: the claim, the paper's figure, "
            "ours, the rule that decides, and the outcome in plain words.\n\n";
    for (const auto& v : in_.verdicts) {
      out_ << "### " << v.id << ": " << outcome_text(v.outcome) << "\n\n"
           << "- **Claim:** " << v.claim << ".\n"
           << "- **Paper:** " << v.paper << ".\n"
           << "- **Ours:** " << v.ours << ".\n"
           << "- **Rule:** " << v.rule << ".\n\n"
           << v.explanation << "\n\n";
    }
  }

  void runs() {
    out_ << "## Runs\n\n| Run | Mode | Devices | Frames per device | Sent | Acked | Edge logged | "
            "Handshakes ok / started | Resets | Duration (s) | Device exit |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& r : in_.runs) {
      const Json& s = r.summary;
      out_ << "| " << r.name << " | " << r.mode << " | " << r.devices << " | "
           << count(r.frames_per_device) << " | " << integer(at(s, "/packets_sent")) << " | "
           << integer(at(s, "/packets_acked")) << " | " << count(r.edge_rows) << " | "
           << integer(at(s, "/handshakes/ok")) << " / " << integer(at(s, "/handshakes/started"))
           << " | " << integer(at(s, "/resets")) << " | " << fixed(r.wall_s, 1) << " | "
           << (r.exit_text.empty() ? std::string(kMissing) : r.exit_text) << " |\n";
    }
    out_ << "\nCommands:\n\n```\n";
    for (const auto& c : in_.commands) out_ << c << "\n";
    for (const auto& r : in_.runs) out_ << r.command << "\n";
    out_ << "```\n\n";
    const auto& stats = in_.setup.link_stats;
    if (has(stats))
      out_ << "Link emulator statistics (`processes/link-stats.json`):\n\n```json\n"
           << stats.dump(2) << "\n```\n\n";
  }

  void files() {
    out_ << "## Files in this folder\n\n"
         << "| Path | What |\n|---|---|\n"
         << "| `report.md`, `experiment.json` | this report; its figures and verdicts as JSON |\n"
         << "| `logs/main/`, `logs/trial/` | the CSV logs (docs/LOGS.md): client logs, handshake "
            "log, server logs |\n"
         << "| `analysis/main/`, `analysis/trial/` | dsekp analyze: report.md, summary.json, "
            "figures |\n"
         << "| `devices/` | each device run's summary (`dsekp device --summary-json`) |\n"
         << "| `processes/` | output of every process (broker log, edge, link, devices, "
            "analyze) |\n"
         << "| `broker/mosquitto.conf` | the private broker's configuration |\n"
         << "| `secrets/` (0700) | registry, edge state, device credentials, broker password "
            "file: **secret**, do not publish |\n\n";
  }

  const ReportInputs& in_;
  int dec_;
  std::ostringstream out_;
};

}  // namespace

std::string report_markdown(const ReportInputs& inputs) {
  return Writer(inputs).write();
}

OJson experiment_json(const ReportInputs& in) {
  const auto& s = in.setup;
  OJson runs = OJson::array();
  for (const auto& r : in.runs)
    runs.push_back({{"name", r.name},
                    {"mode", r.mode},
                    {"devices", r.devices},
                    {"frames_per_device", r.frames_per_device},
                    {"command", r.command},
                    {"exit_code", r.exit_code ? OJson(*r.exit_code) : OJson(nullptr)},
                    {"exit", r.exit_text},
                    {"edge_rows", r.edge_rows},
                    {"wall_s", r.wall_s},
                    {"summary", r.summary}});
  OJson verdicts = OJson::array();
  for (const auto& v : in.verdicts) verdicts.push_back(to_json(v));
  OJson link = nullptr;
  if (!s.link_name.empty())
    link = {{"name", s.link_name},
            {"spec", s.link_spec},
            {"description", s.link_description},
            {"stats", s.link_stats}};
  return {
      {"generator", "dsekp experiment"},
      {"status", in.problems.empty() ? "complete" : "completed_with_problems"},
      {"problems", in.problems},
      {"started_utc", s.started_utc},
      {"finished_utc", s.finished_utc},
      {"duration_s", s.duration_s},
      {"command_line", s.command_line},
      {"machine", to_json(s.machine)},
      {"setup",
       {{"broker", s.broker},
        {"link", link},
        {"devices", s.devices},
        {"packets_per_device", s.packets},
        {"interval_ms", s.interval_ms},
        {"paper_timing", s.paper_timing},
        {"encoding", s.encoding},
        {"qos", s.qos},
        {"seed", s.seed},
        {"trial", s.trial ? OJson{{"devices", s.trial_devices},
                                  {"packets_per_device", s.trial_packets},
                                  {"reset_prob", s.reset_prob},
                                  {"reset_every", s.reset_every},
                                  {"expected_resets", s.expected_resets},
                                  {"edge_limits", s.trial_edge_limits}}
                          : OJson(nullptr)}}},
      {"runs", runs},
      {"analysis",
       {{"main", has(in.main_summary) ? OJson("analysis/main/summary.json") : OJson(nullptr)},
        {"trial", has(in.trial_summary) ? OJson("analysis/trial/summary.json") : OJson(nullptr)}}},
      {"verdicts", verdicts}};
}

}  // namespace dsekp::experiment
