// `dsekp analyze` (see analyze_command.hpp): option parsing, running the analysis and writing the
// outputs; the analysis itself is the dsekp_analyze library (analyze/).
#include "analyze_command.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "analyze/error.hpp"
#include "analyze/figures.hpp"
#include "analyze/inputs.hpp"
#include "analyze/report_markdown.hpp"
#include "analyze/summary_json.hpp"
#include "analyze/text_format.hpp"

namespace dsekp::cli {
namespace {

namespace fs = std::filesystem;
using namespace dsekp::analyze;

struct AnalyzeOptions {
  std::vector<fs::path> log_dirs;
  ExplicitFiles files;
  fs::path out = "results/analysis";
  double outlier_ms = 10000;
  bool paper = false;
  bool no_figures = false;
  std::size_t bad_rows_listed = 20;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw AnalyzeError(path.string() + ": cannot write");
}

void print_bad_rows(const AnalysisResult& result) {
  for (const auto& f : result.files) {
    if (f.bad_rows == 0) continue;
    std::fprintf(stderr, "dsekp analyze: %s: %s bad row(s) of %s, excluded", f.path.c_str(),
                 count(f.bad_rows).c_str(), count(f.rows).c_str());
    if (!f.first_bad_rows.empty())
      std::fprintf(stderr, " (first %zu listed)", f.first_bad_rows.size());
    std::fprintf(stderr, ":\n");
    for (const auto& b : f.first_bad_rows)
      std::fprintf(stderr, "  %s:%llu: %s\n", f.path.c_str(),
                   static_cast<unsigned long long>(b.line), b.reason.c_str());
  }
}

// Rows bad for the µs latency table only (they stay in every other figure).
void print_micros_bad_rows(const ModeResult& m) {
  if (!m.latency_us) return;
  for (const auto& f : m.latency_us->files) {
    if (f.bad_rows == 0) continue;
    std::fprintf(stderr, "dsekp analyze: %s: %s row(s) left out of the µs latency table only:\n",
                 f.path.c_str(), count(f.bad_rows).c_str());
    for (const auto& b : f.first_bad_rows)
      std::fprintf(stderr, "  %s:%llu: %s\n", f.path.c_str(),
                   static_cast<unsigned long long>(b.line), b.reason.c_str());
  }
}

void print_micros(const ModeResult& m) {
  if (!m.latency_us) return;
  const auto& s = m.latency_us->stats;
  std::printf("%-6s n=%s  latency (µs columns) mean %s ± %s µs, median %s, p95 %s, p99 %s\n",
              std::string(mode_label(m.mode)).c_str(), count(s.n).c_str(), fixed(s.mean, 1).c_str(),
              fixed(s.sd, 1).c_str(), fixed(s.median, 1).c_str(), fixed(s.p95, 1).c_str(),
              fixed(s.p99, 1).c_str());
}

void print_mode(const ModeResult& m) {
  const auto& s = m.latency.stats;
  std::printf("%-6s n=%s  latency mean %s ± %s ms, median %s, p95 %s, p99 %s; payload %s B; ",
              std::string(mode_label(m.mode)).c_str(), count(s.n).c_str(), fixed(s.mean, 1).c_str(),
              fixed(s.sd, 1).c_str(), fixed(s.median, 1).c_str(), fixed(s.p95, 1).c_str(),
              fixed(s.p99, 1).c_str(), fixed(m.payload_summary.mean, 1).c_str());
  if (m.reliability) {
    std::printf("delivery %s %%\n", fixed(m.reliability->total.delivery_pct(), 2).c_str());
  } else {
    std::printf("no client log\n");
  }
}

void run(const AnalyzeOptions& options) {
  const AnalysisInputs inputs = collect_inputs(options.log_dirs, options.files);
  AnalysisOptions analysis_options;
  analysis_options.outlier_ms = options.outlier_ms;
  analysis_options.bad_rows_listed = options.bad_rows_listed;
  const AnalysisResult result = analyze_logs(inputs, analysis_options);
  print_bad_rows(result);
  for (const auto* m :
       {result.psk ? &*result.psk : nullptr, result.dsekp ? &*result.dsekp : nullptr})
    if (m) print_micros_bad_rows(*m);

  std::error_code ec;
  fs::create_directories(options.out, ec);
  if (ec) throw AnalyzeError(options.out.string() + ": cannot create: " + ec.message());
  FiguresResult figures;
  if (!options.no_figures) {
    figures = write_figures(result, options.out, true);
    if (!figures.gnuplot_found)
      std::fprintf(stderr, "dsekp analyze: %s\n", figures.message.c_str());
  }
  write_text(options.out / "report.md",
             report_markdown(result, figures, ReportOptions{options.paper, 50}));
  write_text(options.out / "summary.json",
             summary_json(result, figures, options.paper).dump(2) + "\n");

  for (const auto* m :
       {result.psk ? &*result.psk : nullptr, result.dsekp ? &*result.dsekp : nullptr})
    if (m) print_mode(*m);
  for (const auto* m :
       {result.psk ? &*result.psk : nullptr, result.dsekp ? &*result.dsekp : nullptr})
    if (m) print_micros(*m);
  if (const auto& c = result.latency_us_comparison)
    std::printf(
        "PSK vs DSEKP (µs columns): DSEKP − PSK mean %s µs (Welch p %s), median %s µs "
        "(rank-sum p %s)\n",
        signed_fixed(c->mean_difference_us, 1).c_str(),
        p_value(c->t_test ? std::optional(c->t_test->p) : std::nullopt).c_str(),
        signed_fixed(c->median_difference_us, 1).c_str(),
        p_value(c->rank_sum ? std::optional(c->rank_sum->p) : std::nullopt).c_str());
  if (result.comparison && result.comparison->cohens_d)
    std::printf("PSK vs DSEKP: Cohen's d %s, Cliff's delta %s, payload overhead %s %%\n",
                signed_fixed(result.comparison->cohens_d, 3).c_str(),
                signed_fixed(result.comparison->cliffs_delta, 3).c_str(),
                fixed(result.comparison->payload_overhead_pct, 2).c_str());
  if (result.handshakes)
    std::printf("Handshakes: %s, success %s %%, latency mean %s ms\n",
                count(result.handshakes->handshakes).c_str(),
                fixed(result.handshakes->success_pct, 2).c_str(),
                fixed(result.handshakes->latency_ms.mean, 1).c_str());
  if (result.bad_rows > 0)
    std::printf("Bad rows: %s (excluded; listed in report.md and above)\n",
                count(result.bad_rows).c_str());
  if (figures.requested && figures.gnuplot_found) std::printf("%s\n", figures.message.c_str());
  std::printf("Wrote %s and %s (read %.2f s, computed %.2f s)\n",
              (options.out / "report.md").c_str(), (options.out / "summary.json").c_str(),
              result.seconds_reading, result.seconds_computing);
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Analyse PSK and DSEKP experiment logs (docs/LOGS.md): report.md, summary.json, figures");
  cmd->add_option("--logs", options->log_dirs,
                  "Directory with the standard log names (server_logs_psk.csv, ...); repeat for "
                  "more runs")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--psk-server", options->files.psk_server,
                  "PSK server log (repeatable: one per run)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--psk-client", options->files.psk_client,
                  "PSK client log, paired with --psk-server by position")
      ->check(CLI::ExistingFile);
  cmd->add_option("--dsekp-server", options->files.dsekp_server,
                  "DSEKP server log (repeatable: one per run)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--dsekp-client", options->files.dsekp_client,
                  "DSEKP client log, paired with --dsekp-server by position")
      ->check(CLI::ExistingFile);
  cmd->add_option("--handshakes", options->files.handshakes,
                  "DSEKP handshake log (client_handshakes_dsekp.csv; repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", options->out, "Output directory")->capture_default_str();
  cmd->add_option("--outlier-ms", options->outlier_ms,
                  "Exclude latencies above this from the latency statistics (paper: 10000); 0 "
                  "turns the rule off")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--bad-rows-listed", options->bad_rows_listed,
                  "Bad rows listed per file (all are counted)")
      ->capture_default_str();
  cmd->add_flag("--paper", options->paper, "Add the paper's published values beside ours");
  cmd->add_flag("--no-figures", options->no_figures, "Do not write or render the figures");
  cmd->callback([options] { run(*options); });
}

}  // namespace dsekp::cli
