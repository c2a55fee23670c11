// report.md: the analysis as Markdown, with the paper's Table 6 and Table 7 laid out as in the
// paper (plus rows of ours, marked), reliability per device, throughput, the multi-session
// trials, the figures, the bad rows and the definitions used. With `paper`, two more columns give
// the paper's published values.
#pragma once

#include <string>

#include "analysis.hpp"
#include "figures.hpp"

namespace dsekp::analyze {

struct ReportOptions {
  bool paper = false;
  std::size_t max_devices_listed = 50;  // per mode; all are in summary.json
};

std::string report_markdown(const AnalysisResult& result, const FiguresResult& figures,
                            const ReportOptions& options);

}  // namespace dsekp::analyze
