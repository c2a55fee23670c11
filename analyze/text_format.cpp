// Number formatting (see text_format.hpp).
#include "text_format.hpp"

#include <cmath>
#include <cstdio>

namespace dsekp::analyze {
namespace {

// Inserts thousands separators into the integer part of a plain decimal string.
std::string group(const std::string& plain) {
  std::size_t start = plain.starts_with('-') ? 1 : 0;
  std::size_t end = plain.find('.');
  if (end == std::string::npos) end = plain.size();
  std::string out = plain.substr(0, start);
  for (std::size_t i = start; i < end; ++i) {
    out += plain[i];
    const std::size_t left = end - i - 1;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return out + plain.substr(end);
}

}  // namespace

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string s = buffer;
  if (s == "-0" || s.find_first_not_of("-0.") == std::string::npos) s.erase(0, s.starts_with('-'));
  return group(s);
}

std::string fixed(const std::optional<double>& value, int decimals) {
  return value ? fixed(*value, decimals) : kMissing;
}

std::string count(std::uint64_t value) {
  return group(std::to_string(value));
}

std::string p_value(const std::optional<double>& p) {
  if (!p) return kMissing;
  // A p below the smallest double prints as 0 in R and MATLAB (the paper's "rank-sum p = 0").
  if (*p == 0) return "< 1e-300";
  char buffer[64];
  if (*p < 0.001) {
    std::snprintf(buffer, sizeof buffer, "%.3g", *p);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.4f", *p);
  }
  return buffer;
}

std::string signed_fixed(const std::optional<double>& value, int decimals) {
  if (!value) return kMissing;
  const std::string s = fixed(std::fabs(*value), decimals);
  if (s.find_first_not_of("0.,") == std::string::npos) return s;
  return (*value < 0 ? "−" : "+") + s;
}

}  // namespace dsekp::analyze
