// Writer of the Prometheus text exposition format, version 0.0.4: what GET /metrics returns.
//
// Written here rather than taken from prometheus-cpp (not packaged for Debian 12); the format is
// a few line rules:
//   # HELP <name> <help, with \ and newline escaped>
//   # TYPE <name> counter|gauge|histogram
//   <name>[{<label>="<value, with \ " and newline escaped>",...}] <value>
// A histogram adds <name>_bucket{...,le="<bound>"} lines with cumulative counts, always ending
// with le="+Inf" (equal to _count), then <name>_sum and <name>_count. Every line ends in '\n',
// the last one too. Numbers are written with std::to_chars (locale-independent, shortest form
// that reads back as the same double, laid out as Prometheus' Go client does), so a German or
// French locale cannot turn 0.5 into 0,5; infinities and NaN are spelt +Inf, -Inf and NaN as
// Prometheus' parser expects.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "edge/metrics/metric_snapshot.hpp"

namespace dsekp::edge::metrics {

/// The Content-Type of the format (what Prometheus' own client libraries send).
inline constexpr std::string_view kTextFormatContentType =
    "text/plain; version=0.0.4; charset=utf-8";

/// The exposition of these families, in the given order (Registry::collect sorts by name).
[[nodiscard]] std::string write_text(std::span<const FamilySnapshot> families);

/// A sample value: "+Inf", "-Inf", "NaN", or the shortest round-trip form in Go's %g layout
/// ("0.25", "0.0001", "5e-06", "144320", "1.458255915e+09").
[[nodiscard]] std::string format_sample_value(double value);

/// A label value with \ -> \\, " -> \", newline -> \n (no other escapes exist in 0.0.4).
[[nodiscard]] std::string escape_label_value(std::string_view value);

/// HELP text with \ -> \\ and newline -> \n (quotes are not escaped in HELP).
[[nodiscard]] std::string escape_help(std::string_view help);

}  // namespace dsekp::edge::metrics
