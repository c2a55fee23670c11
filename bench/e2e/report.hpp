// The text and JSON forms of `dsekp bench e2e` and `dsekp bench scale` results: every figure, the
// targets with the measured value beside the limit and "met" / "NOT met", the machine's load, the
// child command lines, and any problem seen on the way.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "e2e_bench.hpp"
#include "scale_bench.hpp"

namespace dsekp::bench::e2e {

std::string e2e_text(const E2eResult& r);
nlohmann::ordered_json e2e_json(const E2eResult& r);

std::string scale_text(const ScaleResult& r);
nlohmann::ordered_json scale_json(const ScaleResult& r);

}  // namespace dsekp::bench::e2e
