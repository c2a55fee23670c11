// Prometheus text format 0.0.4 writer (see prometheus_text.hpp).
#include "edge/metrics/prometheus_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <variant>

namespace dsekp::edge::metrics {
namespace {

const char* type_name(MetricType type) noexcept {
  switch (type) {
    case MetricType::counter:
      return "counter";
    case MetricType::gauge:
      return "gauge";
    case MetricType::histogram:
      return "histogram";
  }
  return "untyped";
}

void append_integer(std::string& out, std::uint64_t value) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

void append_escaped(std::string& out, std::string_view text, bool escape_quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// `{a="x",b="y"}` from the family's labels plus an optional extra one (le); nothing at all when
// there are no labels, as the format writes an unlabelled sample without braces.
void append_labels(std::string& out, const std::vector<std::string>& names,
                   const std::vector<std::string>& values, std::string_view extra_name = {},
                   std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return;
  out += '{';
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    append_escaped(out, values[i], true);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += extra_name;
    out += "=\"";
    append_escaped(out, extra_value, true);
    out += '"';
  }
  out += '}';
}

void append_histogram(std::string& out, const FamilySnapshot& family, const SeriesSnapshot& series,
                      const HistogramSnapshot& h) {
  const std::string bucket = family.name + "_bucket";
  for (std::size_t i = 0; i < h.upper_bounds.size() && i < h.cumulative.size(); ++i) {
    out += bucket;
    append_labels(out, family.label_names, series.label_values, "le",
                  format_sample_value(h.upper_bounds[i]));
    out += ' ';
    append_integer(out, h.cumulative[i]);
    out += '\n';
  }
  out += bucket;
  append_labels(out, family.label_names, series.label_values, "le", "+Inf");
  out += ' ';
  append_integer(out, h.count);
  out += '\n';

  out += family.name;
  out += "_sum";
  append_labels(out, family.label_names, series.label_values);
  out += ' ';
  out += format_sample_value(h.sum);
  out += '\n';

  out += family.name;
  out += "_count";
  append_labels(out, family.label_names, series.label_values);
  out += ' ';
  append_integer(out, h.count);
  out += '\n';
}

void append_series(std::string& out, const FamilySnapshot& family, const SeriesSnapshot& series) {
  std::visit(
      [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, HistogramSnapshot>) {
          append_histogram(out, family, series, value);
        } else {
          out += family.name;
          append_labels(out, family.label_names, series.label_values);
          out += ' ';
          if constexpr (std::is_same_v<T, std::uint64_t>) {
            append_integer(out, value);
          } else {
            out += format_sample_value(value);
          }
          out += '\n';
        }
      },
      series.value);
}

}  // namespace

std::string format_sample_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest digits that read back as the same double, laid out like Go's
  // strconv.FormatFloat(v, 'g', -1, 64), which Prometheus' reference client uses: exponent form
  // when the decimal exponent is < -4 or >= 6, plain decimals otherwise. The same bucket bound
  // then gives the same le label value as in any other exporter ("0.0001", not "1e-04").
  char buf[64];
  const auto sci = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string_view text(buf, static_cast<std::size_t>(sci.ptr - buf));
  std::string_view exponent = text.substr(text.find('e') + 1);
  if (exponent.front() == '+') exponent.remove_prefix(1);
  int exp = 0;
  std::from_chars(exponent.data(), exponent.data() + exponent.size(), exp);
  if (exp < -4 || exp >= 6) return std::string(text);
  const auto fixed = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed);
  return std::string(buf, fixed.ptr);
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  append_escaped(out, value, true);
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  append_escaped(out, help, false);
  return out;
}

std::string write_text(std::span<const FamilySnapshot> families) {
  std::string out;
  for (const FamilySnapshot& family : families) {
    out += "# HELP ";
    out += family.name;
    out += ' ';
    append_escaped(out, family.help, false);
    out += "\n# TYPE ";
    out += family.name;
    out += ' ';
    out += type_name(family.type);
    out += '\n';
    for (const SeriesSnapshot& series : family.series) append_series(out, family, series);
  }
  return out;
}

}  // namespace dsekp::edge::metrics
