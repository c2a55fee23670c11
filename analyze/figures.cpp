// gnuplot figures (see figures.hpp).
#include "figures.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "error.hpp"
#include "text_format.hpp"

namespace dsekp::analyze {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kCdfPoints = 4000;      // points per CDF curve (quantiles beyond that)
constexpr std::size_t kRatePoints = 400;      // points per throughput curve
constexpr std::size_t kOutlierPoints = 3000;  // boxplot outlier markers per mode
constexpr const char* kFigureDir = "figures";

struct Style {
  const char* color;  // gnuplot colour
  int rgb;            // same, as an integer for "lc rgb variable"
};

Style style(Mode mode) {
  return mode == Mode::psk ? Style{"#1f77b4", 0x1f77b4} : Style{"#d95f02", 0xd95f02};
}
constexpr const char* kHandshakeColor = "#1b9e77";

std::string num(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.10g", value);
  return buffer;
}

std::vector<const ModeResult*> present_modes(const AnalysisResult& result) {
  std::vector<const ModeResult*> modes;
  if (result.psk && !result.psk->latency.sorted.empty()) modes.push_back(&*result.psk);
  if (result.dsekp && !result.dsekp->latency.sorted.empty()) modes.push_back(&*result.dsekp);
  return modes;
}

std::string script_header(const std::string& what) {
  return "# " + what +
         "\n# Written by `dsekp analyze`; redraw with `gnuplot <this file>` in this folder.\n"
         "reset\nset encoding utf8\nset grid lc rgb '#dddddd'\nset border lw 1.2\n";
}

// Renders the plot to PNG, then to SVG. The plot commands are repeated rather than `replot`ted
// because replot does not redo a multiplot.
std::string script_outputs(const std::string& name, const std::string& plot) {
  return "set terminal pngcairo size 1000,650 font 'DejaVu Sans,12' noenhanced\n"
         "set output '" +
         name + ".png'\n" + plot +
         "\nset terminal svg size 1000,650 dynamic font 'DejaVu Sans,12' noenhanced "
         "background rgb 'white'\nset output '" +
         name + ".svg'\n" + plot + "\nset output\n";
}

// A log axis that fits [lo, hi] with a little room (gnuplot would round out to whole decades),
// labelled at 1, 2 and 5 of each decade so that values can be read off.
std::string log_range(const char* axis, double lo, double hi) {
  const double from = lo / 1.3;
  const double to = hi * 1.3;
  std::string tics;
  for (double decade = std::pow(10.0, std::floor(std::log10(from))); decade <= to; decade *= 10) {
    for (const double step : {1.0, 2.0, 5.0}) {
      const double v = decade * step;
      if (v < from || v > to) continue;
      char label[32];
      std::snprintf(label, sizeof label, "%g", v);
      tics += std::string(tics.empty() ? "" : ", ") + "'" + label + "' " + num(v);
    }
  }
  return std::string("set ") + axis + "range [" + num(from) + ":" + num(to) + "]\nset " + axis +
         "tics (" + tics + ")\nset m" + axis + "tics 10\n";
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw AnalyzeError(path.string() + ": cannot write");
}

// The empirical CDF, every point up to kCdfPoints values, quantiles (type 7) beyond.
void cdf_block(std::ostringstream& out, std::span<const double> sorted) {
  const std::size_t n = sorted.size();
  if (n <= kCdfPoints) {
    for (std::size_t i = 0; i < n; ++i)
      out << num(sorted[i]) << ' ' << num(static_cast<double>(i + 1) / static_cast<double>(n))
          << '\n';
  } else {
    for (std::size_t k = 0; k <= kCdfPoints; ++k) {
      const double p = static_cast<double>(k) / static_cast<double>(kCdfPoints);
      out << num(quantile_type7(sorted, p)) << ' ' << num(p) << '\n';
    }
  }
  out << "\n\n";
}

std::string outlier_note(const AnalysisResult& result) {
  std::uint64_t excluded = 0;
  for (const auto* m : present_modes(result)) excluded += m->latency.outliers_excluded;
  if (result.options.outlier_ms <= 0) return "no outlier rule";
  return "latencies > " + count(static_cast<std::uint64_t>(result.options.outlier_ms)) +
         " ms excluded: " + count(excluded);
}

Figure latency_cdf(const AnalysisResult& result, const fs::path& dir) {
  const auto modes = present_modes(result);
  std::ostringstream data;
  bool positive = true;
  double lo = 0;
  double hi = 0;
  for (const auto* m : modes) {
    cdf_block(data, m->latency.sorted);
    positive = positive && m->latency.sorted.front() > 0;
    lo = m == modes.front() ? m->latency.sorted.front() : std::min(lo, m->latency.sorted.front());
    hi = std::max(hi, m->latency.sorted.back());
  }
  write_file(dir / "latency_cdf.dat", data.str());
  std::string s = script_header("Figure 4: latency CDF, PSK and DSEKP");
  s += "set title 'Latency CDF (" + outlier_note(result) + ")'\n";
  // Log scale when possible: the tail (p99 and above) spreads out instead of hugging 1.
  s += positive ? "set logscale x\nset xlabel 'Latency (ms, log scale)'\n" + log_range("x", lo, hi)
                : "set xlabel 'Latency (ms)'\n";
  s += "set ylabel 'Cumulative fraction of packets'\nset yrange [0:1.02]\n"
       "set ytics 0.1\nset key right bottom box opaque\n";
  std::string plot = "plot ";
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const auto* m = modes[i];
    if (i > 0) plot += ", \\\n     ";
    plot += "'latency_cdf.dat' index " + std::to_string(i) +
            " using 1:2 with steps lw 2.5 lc rgb '" + style(m->mode).color + "' title '" +
            std::string(mode_label(m->mode)) + " (n = " + count(m->latency.stats.n) + ", median " +
            fixed(m->latency.stats.median, 0) + " ms, p99 " + fixed(m->latency.stats.p99, 0) +
            " ms)'";
  }
  s += script_outputs("latency_cdf", plot);
  write_file(dir / "latency_cdf.gp", s);
  return {"latency_cdf", "Latency CDF of PSK and DSEKP (paper Figure 4)", {}, false};
}

Figure latency_boxplot(const AnalysisResult& result, const fs::path& dir) {
  const auto modes = present_modes(result);
  std::ostringstream boxes;
  std::ostringstream outliers;
  bool positive = true;
  std::string shown_note;
  boxes << "# x q1 whisker_low whisker_high q3 median mean n colour\n";
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const auto& sorted = modes[i]->latency.sorted;
    const double x = static_cast<double>(i + 1);
    const double q1 = quantile_type7(sorted, 0.25);
    const double q3 = quantile_type7(sorted, 0.75);
    const double iqr = q3 - q1;
    // Tukey's whiskers: the most extreme values within 1.5 IQR of the box.
    const auto low = std::lower_bound(sorted.begin(), sorted.end(), q1 - 1.5 * iqr);
    const auto high = std::upper_bound(sorted.begin(), sorted.end(), q3 + 1.5 * iqr);
    boxes << num(x) << ' ' << num(q1) << ' ' << num(*low) << ' ' << num(*(high - 1)) << ' '
          << num(q3) << ' ' << num(*modes[i]->latency.stats.median) << ' '
          << num(*modes[i]->latency.stats.mean) << ' ' << sorted.size() << ' '
          << style(modes[i]->mode).rgb << '\n';
    std::vector<double> out(sorted.begin(), low);
    out.insert(out.end(), high, sorted.end());
    // Too many markers only paint a bar: keep evenly spaced ranks, always the extremes.
    const std::size_t step =
        out.size() > kOutlierPoints ? (out.size() + kOutlierPoints - 1) / kOutlierPoints : 1;
    if (step > 1)
      shown_note += std::string(shown_note.empty() ? "" : ", ") +
                    std::string(mode_label(modes[i]->mode)) + ": 1 in " + std::to_string(step) +
                    " of " + count(out.size()) + " outliers drawn";
    std::size_t drawn = 0;
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (k % step != 0 && k + 1 != out.size()) continue;
      // A small deterministic horizontal jitter keeps coincident markers apart.
      const double jitter = (static_cast<double>(drawn++ % 21) - 10.0) * 0.012;
      outliers << num(x + jitter) << ' ' << num(out[k]) << '\n';
    }
    if (out.empty()) outliers << num(x) << " NaN\n";
    positive = positive && sorted.front() > 0;
  }
  write_file(dir / "latency_boxplot.dat", boxes.str());
  write_file(dir / "latency_boxplot_outliers.dat", outliers.str());

  std::string s = script_header("Figure 5: latency boxplot, PSK and DSEKP");
  // Double quotes: gnuplot expands \n only there.
  s += "set title \"Latency distribution (" + outlier_note(result) + ")" +
       (shown_note.empty() ? "" : "\\n" + shown_note) + "\"\n";
  double lo = modes.front()->latency.sorted.front();
  double hi = modes.front()->latency.sorted.back();
  for (const auto* m : modes) {
    lo = std::min(lo, m->latency.sorted.front());
    hi = std::max(hi, m->latency.sorted.back());
  }
  s += positive ? "set logscale y\nset ylabel 'Latency (ms, log scale)'\n" + log_range("y", lo, hi)
                : "set ylabel 'Latency (ms)'\n";
  s += "set xrange [0.4:" + num(static_cast<double>(modes.size()) + 0.6) + "]\nset xtics (";
  for (std::size_t i = 0; i < modes.size(); ++i)
    s += std::string(i ? ", " : "") + "'" + std::string(mode_label(modes[i]->mode)) + "' " +
         std::to_string(i + 1);
  s += ")\nset boxwidth 0.35\nset style fill solid 0.35 border -1\nset key below horizontal box\n";
  const std::string plot =
      "plot 'latency_boxplot.dat' using 1:2:3:4:5:9 with candlesticks whiskerbars 0.5 lw 2 lc rgb "
      "variable title 'quartiles; whiskers: 1.5 IQR', \\\n"
      "     '' using 1:6:6:6:6 with candlesticks lw 3 lc rgb 'black' title 'median', \\\n"
      "     '' using 1:7 with points pt 9 ps 1.8 lc rgb 'black' title 'mean', \\\n"
      "     'latency_boxplot_outliers.dat' using 1:2 with points pt 6 ps 0.5 lc rgb '#777777' "
      "title 'outliers'";
  s += script_outputs("latency_boxplot", plot);
  write_file(dir / "latency_boxplot.gp", s);
  return {"latency_boxplot", "Latency boxplot of PSK and DSEKP (paper Figure 5)", {}, false};
}

Figure throughput(const AnalysisResult& result, const fs::path& dir) {
  std::vector<const ModeResult*> modes;
  for (const auto* m :
       {result.psk ? &*result.psk : nullptr, result.dsekp ? &*result.dsekp : nullptr})
    if (m && m->throughput.packets > 0) modes.push_back(m);
  std::vector<RateSeries> series;
  double longest = 0;
  double top = 0;
  for (const auto* m : modes) {
    series.push_back(rate_series(m->bins, kRatePoints));
    longest = std::max(longest, static_cast<double>(m->throughput.active_seconds));
    for (const auto& point : series.back().points) top = std::max(top, point.pps);
  }
  // Time axis in a unit that keeps the numbers short.
  double unit = 1;
  std::string unit_name = "s";
  if (longest > 2 * 3600) {
    unit = 3600;
    unit_name = "h";
  } else if (longest > 2 * 60) {
    unit = 60;
    unit_name = "min";
  }
  std::ostringstream data;
  for (const auto& one : series) {
    for (const auto& point : one.points)
      data << num(point.t_s / unit) << ' ' << num(point.pps) << '\n';
    data << "\n\n";
  }
  write_file(dir / "throughput.dat", data.str());
  std::string s = script_header("Figure 6: packet rate over time, PSK and DSEKP");
  // One panel per mode on the same axes: overlaid, two noisy rate curves hide each other.
  std::string plot = "set multiplot layout " + std::to_string(modes.size()) +
                     ",1 title 'Packet rate at the edge over time (by receive time; runs placed "
                     "end to end)'\n";
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const auto* m = modes[i];
    const std::string label(mode_label(m->mode));
    plot += "set xrange [0:" + num(longest / unit) + "]\nset yrange [0:" + num(top * 1.25 + 0.01) +
            "]\nset ylabel 'Packets/s'\nset key right top box opaque\n";
    plot += i + 1 == modes.size() ? "set xlabel 'Time since the first packet (" + unit_name + ")'\n"
                                  : "unset xlabel\n";
    plot += "plot 'throughput.dat' index " + std::to_string(i) +
            " using 1:2 with lines lw 1.5 lc rgb '" + style(m->mode).color + "' title '" + label +
            ": mean over " + std::to_string(series[i].window_s) + " s windows', \\\n     " +
            num(m->throughput.pps_active.value_or(0)) +
            " with lines dt 2 lw 2 lc rgb 'black' title '" + label +
            " overall: " + fixed(m->throughput.pps_active, 2) + " packets/s'\n";
  }
  plot += "unset multiplot\n";
  s += script_outputs("throughput", plot);
  write_file(dir / "throughput.gp", s);
  return {"throughput", "Packet rate over time (paper Figure 6)", {}, false};
}

Figure payload(const AnalysisResult& result, const fs::path& dir) {
  std::vector<const ModeResult*> modes;
  for (const auto* m :
       {result.psk ? &*result.psk : nullptr, result.dsekp ? &*result.dsekp : nullptr})
    if (m && m->payload_summary.mean) modes.push_back(m);
  std::ostringstream data;
  data << "# x mean_bytes sd_bytes colour\n";
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const auto& p = modes[i]->payload_summary;
    data << (i + 1) << ' ' << num(*p.mean) << ' ' << num(p.sd.value_or(0)) << ' '
         << style(modes[i]->mode).rgb << '\n';
  }
  write_file(dir / "payload.dat", data.str());
  std::string s = script_header("Figure 7: mean payload size, PSK and DSEKP");
  std::string title = "Mean MQTT payload size per received packet";
  if (result.comparison && result.comparison->payload_overhead_pct)
    title += " (DSEKP overhead " + signed_fixed(result.comparison->payload_overhead_pct, 2) + " %)";
  s += "set title '" + title + "'\nset ylabel 'Payload size (bytes)'\nset yrange [0:*]\n";
  s += "set xrange [0.4:" + num(static_cast<double>(modes.size()) + 0.6) + "]\nset xtics (";
  for (std::size_t i = 0; i < modes.size(); ++i)
    s += std::string(i ? ", " : "") + "'" + std::string(mode_label(modes[i]->mode)) + "' " +
         std::to_string(i + 1);
  s += ")\nset boxwidth 0.5\nset style fill solid 0.75 border -1\nset key right top box opaque\n"
       "set offsets 0, 0, graph 0.12, 0\n";
  const std::string plot =
      "plot 'payload.dat' using 1:2:4 with boxes lc rgb variable notitle, \\\n"
      "     '' using 1:2:3 with yerrorbars pt 7 ps 0 lw 1.5 lc rgb 'black' title '± 1 SD', \\\n"
      "     '' using 1:2:(sprintf('%.1f B', $2)) with labels offset 0,1.2 notitle";
  s += script_outputs("payload", plot);
  write_file(dir / "payload.gp", s);
  return {"payload", "Mean payload size (paper Figure 7)", {}, false};
}

Figure handshake_latency(const HandshakeSummary& h, const fs::path& dir) {
  std::ostringstream data;
  cdf_block(data, h.latencies_sorted);
  write_file(dir / "handshake_latency.dat", data.str());
  const bool positive = h.latencies_sorted.front() > 0;
  std::string s = script_header("DSEKP handshake latency (INIT -> ACK), multi-session trials");
  s += "set title 'DSEKP handshake latency, first INIT sent to ACK accepted (" + count(h.ok) +
       " of " + count(h.handshakes) + " handshakes succeeded, " + fixed(h.success_pct, 1) +
       " %)'\n";
  s += positive ? "set logscale x\nset xlabel 'Handshake latency (ms, log scale)'\n" +
                      log_range("x", h.latencies_sorted.front(), h.latencies_sorted.back())
                : "set xlabel 'Handshake latency (ms)'\n";
  s += "set ylabel 'Cumulative fraction of handshakes'\nset yrange [0:1.02]\nset ytics 0.1\n"
       "set key right bottom box opaque\n";
  const std::string plot = "plot 'handshake_latency.dat' using 1:2 with steps lw 2.5 lc rgb '" +
                           std::string(kHandshakeColor) + "' title 'DSEKP (mean " +
                           fixed(h.latency_ms.mean, 1) + " ms, median " +
                           fixed(h.latency_ms.median, 1) + " ms, p95 " +
                           fixed(h.latency_ms.p95, 1) + " ms)'";
  s += script_outputs("handshake_latency", plot);
  write_file(dir / "handshake_latency.gp", s);
  return {"handshake_latency", "DSEKP handshake latency CDF (multi-session trials)", {}, false};
}

// Runs `gnuplot script` in `dir`, its output appended to gnuplot.log there. True on exit 0.
bool run_gnuplot(const fs::path& gnuplot, const fs::path& dir, const std::string& script) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(127);
    const int log = open("gnuplot.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
      close(log);
    }
    execl(gnuplot.c_str(), "gnuplot", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool non_empty(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && fs::file_size(path, ec) > 0;
}

}  // namespace

fs::path find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::string_view rest = path;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view entry = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    if (entry.empty()) continue;
    const fs::path candidate = fs::path(entry) / program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

FiguresResult write_figures(const AnalysisResult& result, const fs::path& out_dir, bool render) {
  FiguresResult out;
  out.requested = true;
  const fs::path dir = out_dir / kFigureDir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw AnalyzeError(dir.string() + ": cannot create: " + ec.message());
  fs::remove(dir / "gnuplot.log", ec);

  if (!present_modes(result).empty()) {
    out.figures.push_back(latency_cdf(result, dir));
    out.figures.push_back(latency_boxplot(result, dir));
  }
  if ((result.psk && result.psk->throughput.packets > 0) ||
      (result.dsekp && result.dsekp->throughput.packets > 0)) {
    out.figures.push_back(throughput(result, dir));
    out.figures.push_back(payload(result, dir));
  }
  if (result.handshakes && !result.handshakes->latencies_sorted.empty())
    out.figures.push_back(handshake_latency(*result.handshakes, dir));

  const fs::path gnuplot = render ? find_on_path("gnuplot") : fs::path{};
  out.gnuplot_found = !gnuplot.empty();
  std::size_t failed = 0;
  for (auto& figure : out.figures) {
    const std::string base = std::string(kFigureDir) + "/" + figure.name;
    figure.files = {base + ".gp"};
    // A figure from an earlier run must not pass for this one if rendering fails now.
    fs::remove(out_dir / (base + ".png"), ec);
    fs::remove(out_dir / (base + ".svg"), ec);
    if (out.gnuplot_found) {
      const bool ran = run_gnuplot(gnuplot, dir, figure.name + ".gp");
      figure.rendered =
          ran && non_empty(out_dir / (base + ".png")) && non_empty(out_dir / (base + ".svg"));
      if (figure.rendered) {
        figure.files.push_back(base + ".png");
        figure.files.push_back(base + ".svg");
      } else {
        ++failed;
      }
    }
  }
  if (!render) {
    out.message = "figures not rendered (render off); data and gnuplot scripts are in " +
                  (out_dir / kFigureDir).string();
  } else if (!out.gnuplot_found) {
    out.message =
        "gnuplot not found on PATH: figures NOT rendered. Their data and .gp scripts are in " +
        dir.string() +
        "; install gnuplot (Debian: gnuplot-nox, or `make deps`) and run `gnuplot *.gp` "
        "there, or rerun dsekp analyze";
  } else if (failed > 0) {
    out.message = std::to_string(failed) + " figure(s) failed to render; see " +
                  (dir / "gnuplot.log").string();
  } else {
    out.message = std::to_string(out.figures.size()) +
                  (out.figures.size() == 1 ? " figure" : " figures") +
                  " rendered to PNG and SVG in " + dir.string();
  }
  return out;
}

}  // namespace dsekp::analyze
