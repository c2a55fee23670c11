// read_config_file (see edge_config_file.hpp).
#include "edge/daemon/edge_config_file.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <variant>

#include "edge/daemon/edge_options.hpp"

namespace dsekp::edge::daemon {
namespace {

using Setter = std::function<void(const toml::node&, const std::string& key)>;

[[noreturn]] void bad(const std::string& key, const std::string& what) {
  throw std::runtime_error(key + ": " + what);
}

// `choices` not empty: the string must be one of them.
Setter text(std::string& out, std::span<const std::string_view> choices = {}) {
  return [&out, choices](const toml::node& n, const std::string& key) {
    const auto v = n.value_exact<std::string>();
    if (!v) bad(key, "expected a string");
    if (!choices.empty() && std::find(choices.begin(), choices.end(), *v) == choices.end()) {
      std::string allowed;
      for (const std::string_view c : choices)
        allowed += (allowed.empty() ? "" : ", ") + std::string(c);
      bad(key, "expected one of " + allowed);
    }
    out = *v;
  };
}

Setter flag(bool& out) {
  return [&out](const toml::node& n, const std::string& key) {
    const auto v = n.value_exact<bool>();
    if (!v) bad(key, "expected true or false");
    out = *v;
  };
}

Setter number(std::uint32_t& out, std::uint32_t min = 0,
              std::uint32_t max = std::numeric_limits<std::uint32_t>::max()) {
  return [&out, min, max](const toml::node& n, const std::string& key) {
    const auto v = n.value_exact<std::int64_t>();
    if (!v) bad(key, "expected an integer");
    if (*v < min || *v > max)
      bad(key, "out of range " + std::to_string(min) + ".." + std::to_string(max));
    out = static_cast<std::uint32_t>(*v);
  };
}

// A name from a fixed list (log_format, log_level): `parse` says whether it is one, `refused`
// why not.
template <typename Value>
Setter choice(Value& out, bool (*parse)(std::string_view, Value&) noexcept,
              std::string (*refused)(std::string_view)) {
  return [&out, parse, refused](const toml::node& n, const std::string& key) {
    const auto v = n.value_exact<std::string>();
    if (!v) bad(key, "expected a string");
    if (!parse(*v, out)) bad(key, refused(*v));
  };
}

}  // namespace

void read_config_file(const std::string& path, EdgeDaemonOptions& o, std::string& broker) {
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw std::runtime_error(path + ":" + std::to_string(at.line) + ":" +
                             std::to_string(at.column) + ": " + std::string(e.description()));
  }
  std::string username;
  bool has_username = false;
  // The plain options from their table (edge_options.hpp), then the ones of their own shape.
  std::map<std::string, Setter> keys;
  for (const OptionSpec& spec : edge_option_specs()) {
    if (!spec.in_config_file) continue;
    keys.emplace(std::string(spec.key),
                 std::visit(
                     [&](auto member) -> Setter {
                       using Member = decltype(member);
                       if constexpr (std::is_same_v<Member, std::string EdgeDaemonOptions::*>)
                         return text(o.*member, spec.choices);
                       else if constexpr (std::is_same_v<Member, bool EdgeDaemonOptions::*>)
                         return flag(o.*member);
                       else
                         return number(o.*member, spec.min, spec.max);
                     },
                     spec.member));
  }
  keys.emplace("broker", text(broker));
  keys.emplace("username", [&](const toml::node& n, const std::string& key) {
    text(username)(n, key);
    has_username = true;
  });
  keys.emplace("log_format",
               choice(o.log_format, logging::parse_log_format, logging::log_format_error));
  keys.emplace("log_level",
               choice(o.log_level, logging::parse_log_level, logging::log_level_error));
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    const auto it = keys.find(name);
    try {
      if (it == keys.end()) bad(name, "unknown key");
      it->second(node, name);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
  }
  if (has_username) o.username = username;
}

}  // namespace dsekp::edge::daemon
