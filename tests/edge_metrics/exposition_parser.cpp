// Grammar check and sample extraction for the Prometheus text format (exposition_parser.hpp).
//
// Rules checked: every line ends in '\n' (the last one too) and none is empty; comments are
// `# HELP name text` or `# TYPE name counter|gauge|histogram|summary|untyped`, given at most
// once per family and before its samples; a sample line is
// `name[{label="value",...}] value [timestamp]` with only \\ \" \n escapes in label values and a
// value Prometheus parses (+Inf, -Inf, NaN or a decimal float); a sample belongs to the family
// of the last TYPE line (histograms: name_bucket with an le label, name_sum, name_count); no
// family appears twice; a series (name + labels) appears once.
#include "exposition_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <regex>
#include <set>

namespace dsekp::edge::metrics::testing {
namespace {

const std::regex& sample_line() {
  // Built from named parts: a label value allows only the escapes \\ \" \n.
  static const std::string name = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  static const std::string label = R"re([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")re";
  static const std::string labels = "\\{(?:" + label + "(?:," + label + ")*,?)?\\}";
  static const std::string number =
      R"re([+-]?(?:Inf|NaN|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?))re";
  static const std::regex re("^(" + name + ")(" + labels + ")? (" + number + ")(?: (-?[0-9]+))?$");
  return re;
}

const std::regex& comment_line() {
  static const std::regex re(R"(^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*)(?: (.*))?$)");
  return re;
}

double parse_value(const std::string& s) {
  if (s == "+Inf" || s == "Inf") return std::numeric_limits<double>::infinity();
  if (s == "-Inf") return -std::numeric_limits<double>::infinity();
  if (s == "NaN" || s == "+NaN" || s == "-NaN") return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  const char* begin = s.data() + (s.front() == '+' ? 1 : 0);
  std::from_chars(begin, s.data() + s.size(), v);  // the regex already vetted the form
  return v;
}

// `{a="x",b="y"}` (already matched by the regex) to unescaped pairs.
std::vector<std::pair<std::string, std::string>> parse_labels(std::string_view block) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 1;  // after '{'
  while (i < block.size() && block[i] != '}') {
    const std::size_t eq = block.find('=', i);
    std::string name(block.substr(i, eq - i));
    std::string value;
    std::size_t j = eq + 2;  // after ="
    while (block[j] != '"') {
      if (block[j] == '\\') {
        ++j;
        value += block[j] == 'n' ? '\n' : block[j];
      } else {
        value += block[j];
      }
      ++j;
    }
    out.emplace_back(std::move(name), std::move(value));
    i = j + 1;
    if (i < block.size() && block[i] == ',') ++i;
  }
  return out;
}

bool belongs_to(const std::string& sample, const std::string& family, const std::string& type,
                bool has_le) {
  if (type != "histogram") return sample == family;
  if (sample == family + "_bucket") return has_le;
  return !has_le && (sample == family + "_sum" || sample == family + "_count");
}

}  // namespace

Exposition parse_exposition(std::string_view text) {
  Exposition e;
  if (!text.empty() && text.back() != '\n') e.errors.push_back("text does not end in a newline");
  std::set<std::string> families_seen;
  std::set<std::string> series_seen;
  std::string family;
  std::string type;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = std::min(text.find('\n', pos), text.size());
    const std::string line(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (line.empty()) {
      e.errors.push_back(where + "empty line");
      continue;
    }
    std::smatch m;
    if (line.front() == '#') {
      if (!std::regex_match(line, m, comment_line())) {
        e.errors.push_back(where + "malformed comment: " + line);
        continue;
      }
      const std::string name = m[2];
      if (name != family) {
        if (!families_seen.insert(name).second) e.errors.push_back(where + name + " repeated");
        family = name;
        type.clear();
      }
      if (m[1] == "TYPE") {
        static const std::set<std::string> kTypes{"counter", "gauge", "histogram", "summary",
                                                  "untyped"};
        if (!kTypes.contains(m[3])) e.errors.push_back(where + "unknown type " + m[3].str());
        if (!type.empty()) e.errors.push_back(where + "second TYPE for " + name);
        type = m[3];
        e.types.emplace_back(name, type);
      }
      continue;
    }
    if (!std::regex_match(line, m, sample_line())) {
      e.errors.push_back(where + "not a sample line: " + line);
      continue;
    }
    Sample s{m[1], m[2].matched ? parse_labels(m[2].str()) : decltype(Sample::labels){},
             parse_value(m[3])};
    const bool has_le = std::any_of(s.labels.begin(), s.labels.end(),
                                    [](const auto& l) { return l.first == "le"; });
    if (type.empty() || !belongs_to(s.name, family, type, has_le)) {
      e.errors.push_back(where + s.name + " outside its family's TYPE block");
    }
    if (!series_seen.insert(m[1].str() + m[2].str()).second) {
      e.errors.push_back(where + "series repeated: " + line);
    }
    e.samples.push_back(std::move(s));
  }
  return e;
}

std::optional<double> find_sample(const Exposition& e, std::string_view name,
                                  const std::vector<std::pair<std::string, std::string>>& labels) {
  auto sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  for (const Sample& s : e.samples) {
    if (s.name != name) continue;
    auto have = s.labels;
    std::sort(have.begin(), have.end());
    if (have == sorted) return s.value;
  }
  return std::nullopt;
}

}  // namespace dsekp::edge::metrics::testing
