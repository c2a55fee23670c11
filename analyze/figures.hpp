// The figures of the paper's Figures 4-7 plus the handshake latency, drawn by gnuplot: for each
// figure a data file and a .gp script go into <out>/figures/, then gnuplot renders a PNG
// (pngcairo) and an SVG from the script. The scripts stay, so a figure can be restyled and
// redrawn by hand (`gnuplot latency_cdf.gp` in that folder). Without gnuplot the data and scripts
// are still written and the result says so.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "analysis.hpp"

namespace dsekp::analyze {

struct Figure {
  std::string name;                // e.g. "latency_cdf"
  std::string caption;             // what it shows, for the report
  std::vector<std::string> files;  // written, relative to the output directory
  bool rendered = false;           // the PNG and SVG exist and are non-empty
};

struct FiguresResult {
  bool requested = false;  // false with --no-figures
  bool gnuplot_found = false;
  std::string message;  // what happened, for the report and the console
  std::vector<Figure> figures;
};

/// Writes the figures of `result` into `out_dir`/figures and renders them if `render` and
/// gnuplot is on PATH. Throws AnalyzeError only if files cannot be written.
FiguresResult write_figures(const AnalysisResult& result, const std::filesystem::path& out_dir,
                            bool render);

/// The full path of `program` found on PATH, or empty.
std::filesystem::path find_on_path(const std::string& program);

}  // namespace dsekp::analyze
