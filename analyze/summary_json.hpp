// summary.json: every figure of the analysis in machine-readable form (units in the key names,
// null where a value cannot be computed), plus the inputs, bad rows, options and, with --paper,
// the paper's published values.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis.hpp"
#include "figures.hpp"

namespace dsekp::analyze {

nlohmann::json summary_json(const AnalysisResult& result, const FiguresResult& figures,
                            bool with_paper);

}  // namespace dsekp::analyze
