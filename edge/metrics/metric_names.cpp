// Prometheus metric and label name rules (see metric_names.hpp).
#include "edge/metrics/metric_names.hpp"

namespace dsekp::edge::metrics {
namespace {

// ASCII only, independent of the C locale (std::isalpha would depend on it).
bool is_name_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_name_char(char c) noexcept {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

bool is_identifier(std::string_view name) noexcept {
  if (name.empty() || !is_name_start(name.front())) return false;
  for (char c : name) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

}  // namespace

bool is_valid_metric_name(std::string_view name) noexcept {
  return is_identifier(name);
}

bool is_valid_label_name(std::string_view name) noexcept {
  return is_identifier(name) && !name.starts_with("__");
}

}  // namespace dsekp::edge::metrics
