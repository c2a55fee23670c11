// report.md writer (see report_markdown.hpp).
#include "report_markdown.hpp"

#include <algorithm>
#include <functional>
#include <sstream>

#include "paper_values.hpp"
#include "text_format.hpp"

namespace dsekp::analyze {
namespace {

using Pick = std::function<std::string(const ModeResult&)>;

class Writer {
 public:
  Writer(const AnalysisResult& result, const FiguresResult& figures, const ReportOptions& options)
      : r_(result), figures_(figures), options_(options) {}

  std::string write() {
    title();
    inputs();
    table6();
    table7();
    latency_us();
    reliability();
    throughput();
    payload();
    handshakes();
    figures();
    bad_rows();
    methods();
    return out_.str();
  }

 private:
  const ModeResult* psk() const { return r_.psk ? &*r_.psk : nullptr; }
  const ModeResult* dsekp() const { return r_.dsekp ? &*r_.dsekp : nullptr; }

  static std::string cell(const ModeResult* m, const Pick& pick) { return m ? pick(*m) : kMissing; }

  void table_head() {
    out_ << "| Metric | PSK | DSEKP |" << (options_.paper ? " Paper PSK | Paper DSEKP |" : "")
         << "\n";
    out_ << "|---|---:|---:|" << (options_.paper ? "---:|---:|" : "") << "\n";
  }

  void row(const std::string& metric, const std::string& a, const std::string& b,
           const std::string& pa = kMissing, const std::string& pb = kMissing) {
    out_ << "| " << metric << " | " << a << " | " << b << " |";
    if (options_.paper) out_ << " " << pa << " | " << pb << " |";
    out_ << "\n";
  }

  void mode_row(const std::string& metric, const Pick& pick, const std::string& pa = kMissing,
                const std::string& pb = kMissing) {
    row(metric, cell(psk(), pick), cell(dsekp(), pick), pa, pb);
  }

  void title() {
    out_ << "# DSEKP experiment analysis: PSK vs DSEKP\n\n"
         << "Written by `dsekp analyze` from the logs below (formats: docs/LOGS.md). Every figure "
            "is computed on all rows (no sampling); the same numbers are in `summary.json`.";
    if (options_.paper)
      out_ << " The *Paper* columns are the values published in the DSEKP paper (Tables 6 and 7, "
              "section 5.6), for comparison.";
    out_ << "\n\n";
    if (r_.options.outlier_ms > 0) {
      out_ << "Outlier rule (paper, section 4.6): latencies above "
           << count(static_cast<std::uint64_t>(r_.options.outlier_ms))
           << " ms are excluded from the latency statistics and counted; the packets still count "
              "as delivered and in payload and throughput.\n\n";
    } else {
      out_ << "Outlier rule: off (all latencies enter the statistics).\n\n";
    }
  }

  void inputs() {
    out_ << "## Inputs\n\n| File | Log | Mode | Rows | Bad rows | Blank lines |\n"
            "|---|---|---|---:|---:|---:|\n";
    for (const auto& f : r_.files)
      out_ << "| `" << f.path << "` | " << kind_name(f.kind) << " | " << mode_label(f.mode) << " | "
           << count(f.rows) << " | " << count(f.bad_rows) << " | " << count(f.blank_lines)
           << " |\n";
    out_ << "\n";
    if (r_.bad_rows > 0)
      out_ << "**" << count(r_.bad_rows)
           << " bad row(s)** were excluded from every figure; they are listed under *Bad rows* "
              "below.\n\n";
  }

  void table6() {
    const PaperValues& p = paper_values();
    out_ << "## Summary statistics (layout of the paper's Table 6)\n\n";
    table_head();
    mode_row(
        "Mean latency (ms)",
        [](const ModeResult& m) {
          const auto& s = m.latency.stats;
          return fixed(s.mean, 1) + " ± " + fixed(s.sd, 1);
        },
        fixed(p.psk.mean_latency_ms, 1) + " ± " + fixed(p.psk.sd_latency_ms, 1),
        fixed(p.dsekp.mean_latency_ms, 1) + " ± " + fixed(p.dsekp.sd_latency_ms, 1));
    mode_row(
        "95 % CI (ms)",
        [](const ModeResult& m) {
          const auto& s = m.latency.stats;
          return s.ci95_low ? "[" + fixed(s.ci95_low, 1) + ", " + fixed(s.ci95_high, 1) + "]"
                            : std::string(kMissing);
        },
        "[" + fixed(p.psk.ci95_low_ms, 1) + ", " + fixed(p.psk.ci95_high_ms, 1) + "]",
        "[" + fixed(p.dsekp.ci95_low_ms, 1) + ", " + fixed(p.dsekp.ci95_high_ms, 1) + "]");
    mode_row(
        "Median latency (ms)", [](const ModeResult& m) { return fixed(m.latency.stats.median, 1); },
        fixed(p.psk.median_latency_ms, 0), fixed(p.dsekp.median_latency_ms, 0));
    mode_row(
        "Mean payload (bytes)",
        [](const ModeResult& m) { return fixed(m.payload_summary.mean, 1); },
        fixed(p.psk.mean_payload_bytes, 1), fixed(p.dsekp.mean_payload_bytes, 1));
    mode_row(
        "Throughput (bps)",
        [](const ModeResult& m) { return fixed(m.throughput.bps_nonempty_bins, 1); },
        fixed(p.psk.throughput_bps, 1), fixed(p.dsekp.throughput_bps, 1));
    mode_row(
        "Reliability (%)",
        [](const ModeResult& m) {
          return m.reliability ? fixed(m.reliability->total.delivery_pct(), 2)
                               : std::string("– (no client log)");
        },
        fixed(p.psk.reliability_pct, 1), fixed(p.dsekp.reliability_pct, 1));
    mode_row(
        "*Packets in the latency statistics (n)*",
        [](const ModeResult& m) { return count(m.latency.stats.n); },
        "≈ " + count(static_cast<std::uint64_t>(p.packets_per_mode)),
        "≈ " + count(static_cast<std::uint64_t>(p.packets_per_mode)));
    mode_row(
        "*Latency outliers excluded*",
        [](const ModeResult& m) { return count(m.latency.outliers_excluded); }, "< 0.05 %",
        "< 0.05 %");
    mode_row("*Latency min / max (ms)*", [](const ModeResult& m) {
      return fixed(m.latency.stats.min, 1) + " / " + fixed(m.latency.stats.max, 1);
    });
    mode_row("*Negative latencies (device clock ahead)*",
             [](const ModeResult& m) { return count(m.latency.negative); });
    mode_row("*Throughput over active time (bps)*",
             [](const ModeResult& m) { return fixed(m.throughput.bps_active, 1); });
    out_ << "\nRows in *italics* are ours, not in the paper's table. Throughput (bps) is the "
            "paper's definition as far as its numbers show: payload bits per non-empty 1 s receive "
            "bin (see *Throughput*). Reliability is delivery: received / sent.\n\n";
  }

  void table7() {
    const PaperValues& p = paper_values();
    const Comparison* c = r_.comparison ? &*r_.comparison : nullptr;
    out_ << "## PSK vs DSEKP trade-off (layout of the paper's Table 7)\n\n";
    table_head();
    mode_row(
        "Mean latency (ms)", [](const ModeResult& m) { return fixed(m.latency.stats.mean, 2); },
        fixed(p.psk.mean_latency_ms_t7, 2), fixed(p.dsekp.mean_latency_ms_t7, 2));
    mode_row(
        "Median latency (ms)", [](const ModeResult& m) { return fixed(m.latency.stats.median, 2); },
        fixed(p.psk.median_latency_ms, 2), fixed(p.dsekp.median_latency_ms, 2));
    mode_row(
        "Latency p95 / p99 (ms)",
        [](const ModeResult& m) {
          return fixed(m.latency.stats.p95, 2) + " / " + fixed(m.latency.stats.p99, 2);
        },
        fixed(p.psk.p95_ms, 2) + " / " + fixed(p.psk.p99_ms, 2),
        fixed(p.dsekp.p95_ms, 2) + " / " + fixed(p.dsekp.p99_ms, 2));
    mode_row(
        "Mean payload (bytes)",
        [](const ModeResult& m) { return fixed(m.payload_summary.mean, 1); },
        fixed(p.psk.mean_payload_bytes, 1), fixed(p.dsekp.mean_payload_bytes, 1));
    mode_row(
        "Mean packet rate (pps)",
        [](const ModeResult& m) { return fixed(m.throughput.pps_nonempty_bins, 2); },
        fixed(p.psk.packet_rate_pps, 2), fixed(p.dsekp.packet_rate_pps, 2));
    row("Payload overhead (%)", kMissing, c ? fixed(c->payload_overhead_pct, 2) : kMissing,
        kMissing, fixed(p.payload_overhead_pct, 2));
    row("*t*-test *p* / rank-sum *p*", kMissing,
        c ? p_value(c->t_test ? std::optional(c->t_test->p) : std::nullopt) + " / " +
                p_value(c->rank_sum ? std::optional(c->rank_sum->p) : std::nullopt)
          : kMissing,
        kMissing, p_value(p.t_test_p) + " / 0");
    row("Cohen's *d* / Cliff's Δ", kMissing,
        c ? signed_fixed(c->cohens_d, 3) + " / " + signed_fixed(c->cliffs_delta, 3) : kMissing,
        kMissing, signed_fixed(p.cohens_d, 3) + " / " + signed_fixed(p.cliffs_delta, 3));
    if (c) {
      row("*Welch t (df)*", kMissing,
          c->t_test ? fixed(c->t_test->t, 2) + " (" + fixed(c->t_test->df, 1) + ")" : kMissing);
      row("*Wilcoxon W (z)*", kMissing,
          c->rank_sum ? fixed(c->rank_sum->w, 1) + " (" + fixed(c->rank_sum->z, 2) + ")"
                      : kMissing);
      row("*Mean latency change, DSEKP vs PSK (%)*", kMissing,
          signed_fixed(c->mean_latency_change_pct, 1), kMissing, "+27.2 (derived)");
      row("*Median shift, DSEKP − PSK (ms)*", kMissing, signed_fixed(c->median_shift_ms, 1),
          kMissing, "+81 (derived)");
    }
    mode_row("*Packet rate over active time (pps)*",
             [](const ModeResult& m) { return fixed(m.throughput.pps_active, 3); });
    out_ << "\nTests and effect sizes compare the latencies after the outlier rule, with the sign "
            "PSK − DSEKP (negative: PSK lower), as in the paper. ";
    if (!c) out_ << "They need both modes' logs; one mode is missing here. ";
    out_ << "Definitions under *Methods*.\n\n";
  }

  // Only when a run has both µs columns (latency_us.hpp): without them the report is unchanged.
  void latency_us() {
    const bool any = (psk() && psk()->latency_us) || (dsekp() && dsekp()->latency_us);
    if (!any) return;
    const MicroComparison* c = r_.latency_us_comparison ? &*r_.latency_us_comparison : nullptr;
    out_ << "## Latency at microsecond resolution (ours)\n\n"
            "`latency_ms` is whole milliseconds, too coarse on a fast link (on loopback nearly "
            "every value is 0 or 1). Here latency = `recvts_us` (server log) − `sendts_us` (client "
            "log) of the same packet, joined on (run, dev_id, sessctr_id, seq), in µs; both stamps "
            "are the system clock of the machine that ran device and edge. Only runs whose two "
            "logs have these columns enter";
    if (r_.options.outlier_ms > 0)
      out_ << "; the outlier rule applies at the same threshold ("
           << count(static_cast<std::uint64_t>(r_.options.outlier_ms * 1000)) << " µs)";
    out_ << ".\n\n| Metric | PSK | DSEKP | DSEKP − PSK |\n|---|---:|---:|---:|\n";
    const auto line = [&](const std::string& metric,
                          const std::function<std::string(const MicroLatencyResult&)>& pick,
                          const std::string& difference = kMissing) {
      const auto one = [&](const ModeResult* m) {
        if (!m) return std::string(kMissing);
        return m->latency_us ? pick(*m->latency_us) : std::string("– (no µs columns)");
      };
      out_ << "| " << metric << " | " << one(psk()) << " | " << one(dsekp()) << " | " << difference
           << " |\n";
    };
    line("Runs with both µs columns", [](const MicroLatencyResult& m) {
      return std::to_string(m.runs_with_columns) + " of " + std::to_string(m.runs);
    });
    line("Packets in the statistics (n)",
         [](const MicroLatencyResult& m) { return count(m.stats.n); });
    line(
        "Mean (µs)", [](const MicroLatencyResult& m) { return fixed(m.stats.mean, 1); },
        c ? signed_fixed(c->mean_difference_us, 1) + " (Welch *t*-test *p* = " +
                p_value(c->t_test ? std::optional(c->t_test->p) : std::nullopt) + ")"
          : kMissing);
    line("SD (µs)", [](const MicroLatencyResult& m) { return fixed(m.stats.sd, 1); });
    line(
        "Median, p50 (µs)", [](const MicroLatencyResult& m) { return fixed(m.stats.median, 1); },
        c ? signed_fixed(c->median_difference_us, 1) + " (rank-sum *p* = " +
                p_value(c->rank_sum ? std::optional(c->rank_sum->p) : std::nullopt) + ")"
          : kMissing);
    line("p95 (µs)", [](const MicroLatencyResult& m) { return fixed(m.stats.p95, 1); });
    line("p99 (µs)", [](const MicroLatencyResult& m) { return fixed(m.stats.p99, 1); });
    line("Min / max (µs)", [](const MicroLatencyResult& m) {
      return fixed(m.stats.min, 1) + " / " + fixed(m.stats.max, 1);
    });
    line("*Outliers excluded / negative*", [](const MicroLatencyResult& m) {
      return count(m.outliers_excluded) + " / " + count(m.negative);
    });
    line("*Server rows without a µs latency*", [](const MicroLatencyResult& m) {
      const std::uint64_t total = m.bad_recvts_us + m.no_client_row + m.bad_sendts_us + m.ambiguous;
      if (total == 0) return std::string("0");
      return count(total) + " (bad recvts_us " + count(m.bad_recvts_us) + ", no client row " +
             count(m.no_client_row) + ", bad sendts_us " + count(m.bad_sendts_us) +
             ", client row twice " + count(m.ambiguous) + ")";
    });
    out_ << "\n";
    if (!c)
      out_
          << "The DSEKP − PSK column needs both modes with these columns; one is missing here.\n\n";
    micros_bad_rows();
  }

  void micros_bad_rows() {
    std::vector<const MicroFileReport*> files;
    for (const auto* m : {psk(), dsekp()})
      if (m && m->latency_us)
        for (const auto& f : m->latency_us->files)
          if (f.bad_rows > 0) files.push_back(&f);
    if (files.empty()) {
      out_ << "Every row of these runs had valid µs stamps.\n\n";
      return;
    }
    out_ << "Rows left out of this table only (µs value empty, not whole microseconds, or more "
            "than 1 ms from the ms column of the same instant); they are in every other figure. "
            "The first "
         << r_.options.bad_rows_listed << " of each file:\n\n";
    for (const auto* f : files) {
      out_ << "**`" << f->path << "`** (" << kind_name(f->kind) << "): " << count(f->bad_rows)
           << " row(s)\n\n";
      for (const auto& b : f->first_bad_rows)
        out_ << "- line " << b.line << ": " << b.reason << "\n";
      if (f->bad_rows > f->first_bad_rows.size())
        out_ << "- … and " << count(f->bad_rows - f->first_bad_rows.size()) << " more\n";
      out_ << "\n";
    }
  }

  void device_table(const ModeResult& m) {
    const auto& devices = m.reliability->devices;
    std::vector<const DeviceReliability*> shown;
    for (const auto& d : devices) shown.push_back(&d);
    const bool cut = shown.size() > options_.max_devices_listed;
    if (cut) {
      // Too many to list: show the devices with the lowest delivery, which are the ones to look at.
      std::stable_sort(shown.begin(), shown.end(), [](const auto* a, const auto* b) {
        return a->counts.delivery_pct().value_or(100) < b->counts.delivery_pct().value_or(100);
      });
      shown.resize(options_.max_devices_listed);
    }
    out_ << "**" << mode_label(m.mode) << " per device**"
         << (cut ? " (the " + std::to_string(shown.size()) + " of " + count(devices.size()) +
                       " devices with the lowest delivery; all are in summary.json)"
                 : "")
         << "\n\n| dev_id | Sent | Received | Lost | Duplicates | Unexpected | Delivery (%) |"
         << (m.mode == Mode::dsekp ? " Sessions |" : "") << "\n|---|---:|---:|---:|---:|---:|---:|"
         << (m.mode == Mode::dsekp ? "---:|" : "") << "\n";
    for (const auto* d : shown) {
      const auto& k = d->counts;
      out_ << "| `" << d->dev_id << "` | " << count(k.sent) << " | " << count(k.received) << " | "
           << count(k.lost) << " | " << count(k.duplicates) << " | " << count(k.unexpected) << " | "
           << fixed(k.delivery_pct(), 2) << " |";
      if (m.mode == Mode::dsekp) out_ << " " << count(k.sessions) << " |";
      out_ << "\n";
    }
    out_ << "\n";
  }

  void reliability() {
    out_ << "## Reliability (client logs against server logs)\n\n";
    const auto pick = [](auto get) {
      return [get](const ModeResult& m) {
        return m.reliability ? get(m.reliability->total) : std::string("– (no client log)");
      };
    };
    out_ << "| | PSK | DSEKP |\n|---|---:|---:|\n";
    const auto line = [&](const std::string& metric, const Pick& f) {
      out_ << "| " << metric << " | " << cell(psk(), f) << " | " << cell(dsekp(), f) << " |\n";
    };
    line("Runs with a client log", [](const ModeResult& m) {
      return std::to_string(m.reliability_runs) + " of " + std::to_string(m.runs);
    });
    line("Sent", pick([](const ReliabilityCounts& k) { return count(k.sent); }));
    line("Received", pick([](const ReliabilityCounts& k) { return count(k.received); }));
    line("Lost", pick([](const ReliabilityCounts& k) { return count(k.lost); }));
    line("Duplicates", pick([](const ReliabilityCounts& k) { return count(k.duplicates); }));
    line("Unexpected (received, never logged as sent)",
         pick([](const ReliabilityCounts& k) { return count(k.unexpected); }));
    line("Client rows repeating a packet",
         pick([](const ReliabilityCounts& k) { return count(k.client_duplicate_rows); }));
    line("Delivery (%)",
         pick([](const ReliabilityCounts& k) { return fixed(k.delivery_pct(), 3); }));
    line("Sessions seen in the data logs", [](const ModeResult& m) {
      return m.mode == Mode::psk ? std::string("–")
             : m.reliability     ? count(m.reliability->total.sessions)
                                 : std::string(kMissing);
    });
    out_ << "\n";
    for (const auto* m : {psk(), dsekp()})
      if (m && m->reliability) device_table(*m);
  }

  void throughput() {
    out_ << "## Throughput\n\nPackets are binned by receive second, bin_1s = floor(recvts_ms / "
            "1000). *Non-empty bins*: packets (or payload bits) divided by the number of 1 s "
            "bins that received at least one packet; the paper's Table 7 reports 1.00 pps at one "
            "packet per 2 s and its bps equals mean payload × 8 × that rate, which only this "
            "definition gives. *Active time*: divided by the seconds from the first to the last "
            "packet of each run, empty bins included: the actual rate.\n\n";
    out_ << "| | PSK | DSEKP |\n|---|---:|---:|\n";
    const auto line = [&](const std::string& metric, const Pick& f) {
      out_ << "| " << metric << " | " << cell(psk(), f) << " | " << cell(dsekp(), f) << " |\n";
    };
    line("Packets received", [](const ModeResult& m) { return count(m.throughput.packets); });
    line("Payload bytes received", [](const ModeResult& m) { return count(m.throughput.bytes); });
    line("Non-empty 1 s bins",
         [](const ModeResult& m) { return count(m.throughput.occupied_bins); });
    line("Active time (s)", [](const ModeResult& m) { return count(m.throughput.active_seconds); });
    line("Most packets in one 1 s bin",
         [](const ModeResult& m) { return count(m.throughput.max_packets_in_bin); });
    line("Packet rate, non-empty bins (pps)",
         [](const ModeResult& m) { return fixed(m.throughput.pps_nonempty_bins, 3); });
    line("Packet rate, active time (pps)",
         [](const ModeResult& m) { return fixed(m.throughput.pps_active, 3); });
    line("Throughput, non-empty bins (bps)",
         [](const ModeResult& m) { return fixed(m.throughput.bps_nonempty_bins, 1); });
    line("Throughput, active time (bps)",
         [](const ModeResult& m) { return fixed(m.throughput.bps_active, 1); });
    out_ << "\n";
  }

  void payload() {
    out_ << "## Payload size\n\nBytes of the MQTT payload per packet, from the server logs (as "
            "received) and the client logs (as sent).\n\n| | PSK | DSEKP |\n|---|---:|---:|\n";
    const auto line = [&](const std::string& metric, const Pick& f) {
      out_ << "| " << metric << " | " << cell(psk(), f) << " | " << cell(dsekp(), f) << " |\n";
    };
    line("Received: mean ± SD (bytes)", [](const ModeResult& m) {
      return fixed(m.payload_summary.mean, 2) + " ± " + fixed(m.payload_summary.sd, 2);
    });
    line("Received: min / max (bytes)", [](const ModeResult& m) {
      const auto& p = m.payload_summary;
      return (p.min ? count(*p.min) : kMissing) + " / " + (p.max ? count(*p.max) : kMissing);
    });
    line("Sent: mean (bytes)",
         [](const ModeResult& m) { return fixed(m.client_payload_summary.mean, 2); });
    out_ << "\n";
    if (r_.comparison && r_.comparison->payload_overhead_pct)
      out_ << "Payload overhead of DSEKP over PSK: "
           << fixed(r_.comparison->payload_overhead_pct, 2)
           << " % ((mean DSEKP − mean PSK) / mean PSK).\n\n";
  }

  void handshakes() {
    out_ << "## Multi-session trials (DSEKP handshakes)\n\n";
    if (!r_.handshakes) {
      out_ << "No handshake log (client_handshakes_dsekp.csv) was given.\n\n";
      return;
    }
    const HandshakeSummary& h = *r_.handshakes;
    const auto& l = h.latency_ms;
    out_ << "From client_handshakes_dsekp.csv (our log; the paper only reports, in section 5.6, "
            "that every re-initialisation succeeded in a single INIT → ACK averaging 185 ms). "
            "Handshake latency = ack_recv_ms − init_sent_ms of successful handshakes (first INIT "
            "sent to ACK accepted, retransmissions included).\n\n";
    out_ << "| Metric | DSEKP |" << (options_.paper ? " Paper |" : "") << "\n|---|---:|"
         << (options_.paper ? "---:|" : "") << "\n";
    const auto line = [&](const std::string& metric, const std::string& value,
                          const std::string& paper = kMissing) {
      out_ << "| " << metric << " | " << value << " |" << (options_.paper ? " " + paper + " |" : "")
           << "\n";
    };
    line("Handshakes (sessions attempted)", count(h.handshakes));
    line("ok / timeout / rejected",
         count(h.ok) + " / " + count(h.timeout) + " / " + count(h.rejected));
    line("INIT → ACK success (%)", fixed(h.success_pct, 2), "100 (prose)");
    line("Success on the first INIT (%)", fixed(h.first_attempt_success_pct, 2), "100 (prose)");
    line("INIT transmissions per handshake: mean / max",
         fixed(h.attempts_mean, 2) + " / " + std::to_string(h.attempts_max));
    line("Handshake latency: mean ± SD (ms)", fixed(l.mean, 1) + " ± " + fixed(l.sd, 1),
         fixed(paper_values().handshake_mean_ms, 0) + " (mean)");
    line("Handshake latency: 95 % CI (ms)",
         l.ci95_low ? "[" + fixed(l.ci95_low, 1) + ", " + fixed(l.ci95_high, 1) + "]" : kMissing);
    line("Handshake latency: median / p95 / p99 (ms)",
         fixed(l.median, 1) + " / " + fixed(l.p95, 1) + " / " + fixed(l.p99, 1));
    line("Handshake latency: min / max (ms)", fixed(l.min, 1) + " / " + fixed(l.max, 1));
    line("Devices", count(h.devices));
    line("Sessions (ok handshakes) per device: mean / min / max",
         fixed(h.sessions_per_device_mean, 2) + " / " +
             (h.sessions_per_device_min ? count(*h.sessions_per_device_min) : kMissing) + " / " +
             (h.sessions_per_device_max ? count(*h.sessions_per_device_max) : kMissing));
    out_ << "\n";
  }

  void figures() {
    out_ << "## Figures\n\n";
    if (!figures_.requested) {
      out_ << "Not drawn (--no-figures).\n\n";
      return;
    }
    out_ << figures_.message << ".\n\n";
    for (const auto& f : figures_.figures) {
      if (f.rendered) {
        out_ << "### " << f.caption << "\n\n![" << f.caption << "](figures/" << f.name
             << ".png)\n\n[SVG](figures/" << f.name << ".svg) · [gnuplot script](figures/" << f.name
             << ".gp)\n\n";
      } else {
        out_ << "- " << f.caption << ": not rendered; script `figures/" << f.name << ".gp`\n";
      }
    }
    out_ << "\n";
  }

  void bad_rows() {
    out_ << "## Bad rows\n\n";
    if (r_.bad_rows == 0) {
      out_ << "None: every data row of every file was valid.\n\n";
      return;
    }
    out_ << "Rows that failed a check (field count, number format or range, empty dev_id, "
            "latency_ms not equal to recvts_ms − sendts_ms, inconsistent handshake outcome) are "
            "excluded from every figure. The first "
         << r_.options.bad_rows_listed << " of each file:\n\n";
    for (const auto& f : r_.files) {
      if (f.bad_rows == 0) continue;
      out_ << "**`" << f.path << "`**: " << count(f.bad_rows) << " bad of " << count(f.rows)
           << " rows\n\n";
      for (const auto& b : f.first_bad_rows)
        out_ << "- line " << b.line << ": " << b.reason << "\n";
      if (f.bad_rows > f.first_bad_rows.size())
        out_ << "- … and " << count(f.bad_rows - f.first_bad_rows.size()) << " more\n";
      out_ << "\n";
    }
  }

  void methods() {
    out_ << "## Methods\n\n"
            "- **Latency** = latency_ms of the server log = recvts_ms − sendts_ms (edge receive "
            "time minus the device's send time carried in the frame), in ms. Device and edge "
            "clocks are not corrected here (the paper corrected NTP offsets in MATLAB); negative "
            "values are counted above and kept.\n"
            "- **Mean ± SD**: sample SD (n − 1). **95 % CI** of the mean: mean ± t(0.975, n − 1) "
            "· SD / √n. **Median, p95, p99**: R's default quantile (type 7, linear "
            "interpolation).\n"
            "- **Welch's t-test**: two-sided, unequal variances, Welch–Satterthwaite df.\n"
            "- **Wilcoxon rank-sum** (Mann–Whitney U): two-sided, normal approximation with "
            "tie correction and continuity correction 0.5 (as R's wilcox.test(exact = FALSE, "
            "correct = TRUE)); W = rank sum of PSK − n_PSK (n_PSK + 1) / 2. A p below the "
            "smallest double is printed < 1e-300 (the paper prints 0).\n"
            "- **Cohen's d** = (mean PSK − mean DSEKP) / pooled SD, pooled SD = √(((n₁ − 1) s₁² + "
            "(n₂ − 1) s₂²) / (n₁ + n₂ − 2)). **Cliff's Δ** = P(PSK > DSEKP) − P(PSK < DSEKP) over "
            "all pairs.\n"
            "- **Reliability**: packets are identified by (run, dev_id, sessctr_id, seq) (PSK: "
            "no sessctr_id). Sent = distinct packets in the client logs; received = those also in "
            "the server logs; lost = sent − received; duplicates = server rows beyond the first "
            "of their packet; unexpected = distinct server packets absent from the client logs. "
            "Runs without a client log do not enter these figures.\n"
            "- **Payload overhead** = (mean DSEKP payload − mean PSK payload) / mean PSK payload × "
            "100, from the server logs.\n"
            "- All statistics use Boost.Math distributions and every row (no sampling); the "
            "figures thin their points (quantiles, evenly spaced ranks) only for drawing.\n";
    if ((psk() && psk()->latency_us) || (dsekp() && dsekp()->latency_us))
      out_ << "- **Latency at microsecond resolution** (ours) = recvts_us − sendts_us of each "
              "server row and the client row of the same packet. A server row without a usable "
              "pair (its recvts_us bad, its packet missing from the client log or logged there "
              "twice, or the client row's sendts_us bad) is counted and left out of that table "
              "only. A µs value is bad when empty, not whole decimal digits, or when µs / 1000 is "
              "more than 1 ms from recvts_ms (sendts_ms) of the same row. Mean difference: "
              "Welch's t-test; median difference: the rank-sum test, as above.\n";
  }

  const AnalysisResult& r_;
  const FiguresResult& figures_;
  const ReportOptions& options_;
  std::ostringstream out_;
};

}  // namespace

std::string report_markdown(const AnalysisResult& result, const FiguresResult& figures,
                            const ReportOptions& options) {
  return Writer(result, figures, options).write();
}

}  // namespace dsekp::analyze
