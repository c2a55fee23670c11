// A small, strict reader of the Prometheus text format 0.0.4 for the tests: it checks every
// line against the format's grammar (written from the spec, independently of the writer) and
// returns the samples, so tests can assert on values instead of on substrings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dsekp::edge::metrics::testing {

struct Sample {
  std::string name;                                         // e.g. x_bucket
  std::vector<std::pair<std::string, std::string>> labels;  // unescaped values, in line order
  double value = 0;
};

struct Exposition {
  std::vector<std::string> errors;  // one per violated rule, with the line number
  std::vector<Sample> samples;
  std::vector<std::pair<std::string, std::string>> types;  // (family, type) in order
};

[[nodiscard]] Exposition parse_exposition(std::string_view text);

/// The value of the one sample with this name and exactly these labels (any order).
[[nodiscard]] std::optional<double> find_sample(
    const Exposition& e, std::string_view name,
    const std::vector<std::pair<std::string, std::string>>& labels = {});

}  // namespace dsekp::edge::metrics::testing
