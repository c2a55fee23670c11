// The `--link` text parser and formatter (see link_spec.hpp).
#include "linkemu/link_spec.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <utility>

namespace dsekp::linkemu {
namespace {

// Bounds that keep every later computation (time points, token arithmetic) far from overflow.
constexpr double kMaxDurationUs = 3600.0 * 1e6;  // one hour
constexpr double kMaxRateBits = 1e12;            // 1 Tbit/s
constexpr double kMaxSizeBytes = 1024.0 * 1024 * 1024;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// A failed item: "key: "value" reason".
struct Failure {
  std::string message;
};

Failure fail(std::string_view key, std::string_view value, std::string_view reason) {
  return Failure{std::string(key) + ": \"" + std::string(value) + "\" " + std::string(reason)};
}

/// Splits "12.5ms" into 12.5 and "ms". False if there is no leading number or it is not finite.
bool split_number(std::string_view text, double& number, std::string_view& unit) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || !std::isfinite(number)) return false;
  unit = std::string_view(ptr, static_cast<std::size_t>(end - ptr));
  return true;
}

std::optional<Failure> parse_duration(std::string_view key, std::string_view value,
                                      std::chrono::microseconds& out) {
  double number = 0;
  std::string_view unit;
  if (!split_number(value, number, unit))
    return fail(key, value, "is not a duration (use e.g. 250ms, 1s, 500us)");
  if (number < 0) return fail(key, value, "must not be negative");
  double scale = 0;
  if (unit == "us") {
    scale = 1;
  } else if (unit == "ms") {
    scale = 1e3;
  } else if (unit == "s") {
    scale = 1e6;
  } else if (unit.empty()) {
    if (number != 0) return fail(key, value, "needs a unit: us, ms or s");
  } else {
    return fail(key, value, "has an unknown time unit (use us, ms or s)");
  }
  const double us = number * scale;
  if (us > kMaxDurationUs) return fail(key, value, "is longer than one hour");
  out = std::chrono::microseconds(static_cast<std::int64_t>(std::llround(us)));
  return std::nullopt;
}

std::optional<Failure> parse_rate(std::string_view key, std::string_view value,
                                  std::uint64_t& bits_per_s) {
  double number = 0;
  std::string_view unit;
  if (!split_number(value, number, unit))
    return fail(key, value, "is not a rate (use e.g. 1mbit, 500kbit, 125kB)");
  if (number < 0) return fail(key, value, "must not be negative");
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "/s") unit.remove_suffix(2);
  // Bits: tc's names, case-insensitive. Bytes: capital B only, so "mb" is never a guess.
  static constexpr std::array<std::pair<std::string_view, double>, 4> kBits{
      {{"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}}};
  static constexpr std::array<std::pair<std::string_view, double>, 5> kBytes{
      {{"B", 8}, {"kB", 8e3}, {"KB", 8e3}, {"MB", 8e6}, {"GB", 8e9}}};
  double scale = 0;
  const std::string unit_lower = lower(unit);
  for (const auto& [name, s] : kBits)
    if (unit_lower == name) scale = s;
  for (const auto& [name, s] : kBytes)
    if (unit == name) scale = s;
  if (unit.empty()) return fail(key, value, "needs a unit: bit, kbit, mbit, gbit or B, kB, MB");
  if (scale == 0)
    return fail(key, value, "has an unknown rate unit (use bit, kbit, mbit, gbit or B, kB, MB)");
  const double bits = number * scale;
  if (bits < 1) return fail(key, value, "must be at least 1bit (omit rate for no limit)");
  if (bits > kMaxRateBits) return fail(key, value, "is above 1000gbit");
  bits_per_s = static_cast<std::uint64_t>(std::llround(bits));
  return std::nullopt;
}

std::optional<Failure> parse_size(std::string_view key, std::string_view value,
                                  std::uint64_t& bytes) {
  double number = 0;
  std::string_view unit;
  if (!split_number(value, number, unit))
    return fail(key, value, "is not a size (use e.g. 65536, 64kB, 1MiB)");
  if (number < 0) return fail(key, value, "must not be negative");
  static constexpr std::array<std::pair<std::string_view, double>, 7> kUnits{
      {{"", 1}, {"B", 1}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"KiB", 1024}, {"MiB", 1048576}}};
  double scale = 0;
  for (const auto& [name, s] : kUnits)
    if (unit == name) scale = s;
  if (scale == 0) return fail(key, value, "has an unknown size unit (use B, kB, MB, KiB, MiB)");
  const double total = number * scale;
  if (total != std::floor(total)) return fail(key, value, "is not a whole number of bytes");
  if (total > kMaxSizeBytes) return fail(key, value, "is larger than 1GiB");
  bytes = static_cast<std::uint64_t>(total);
  return std::nullopt;
}

std::optional<Failure> parse_probability(std::string_view key, std::string_view value,
                                         double& out) {
  double number = 0;
  std::string_view unit;
  if (!split_number(value, number, unit))
    return fail(key, value, "is not a probability (use e.g. 0.5% or 0.005)");
  if (unit == "%") {
    number /= 100;
  } else if (!unit.empty()) {
    return fail(key, value, "is not a probability (use e.g. 0.5% or 0.005)");
  }
  if (number < 0 || number > 1) return fail(key, value, "is not between 0 and 100%");
  out = number;
  return std::nullopt;
}

std::optional<Failure> parse_item(std::string_view key, std::string_view value, LinkSpec& spec) {
  if (key == "delay") return parse_duration(key, value, spec.delay);
  if (key == "jitter") return parse_duration(key, value, spec.jitter);
  if (key == "stall_time") return parse_duration(key, value, spec.stall_time);
  if (key == "rate") return parse_rate(key, value, spec.rate_bits_per_s);
  if (key == "burst") return parse_size(key, value, spec.burst_bytes);
  if (key == "queue") {
    if (auto f = parse_size(key, value, spec.queue_bytes)) return f;
    if (spec.queue_bytes == 0) return fail(key, value, "must be at least 1 byte");
    return std::nullopt;
  }
  if (key == "stall") return parse_probability(key, value, spec.stall);
  if (key == "drop") return parse_probability(key, value, spec.drop);
  if (key == "dist") {
    if (value == "normal") {
      spec.distribution = DelayDistribution::normal;
    } else if (value == "lognormal") {
      spec.distribution = DelayDistribution::lognormal;
    } else if (value == "pareto") {
      spec.distribution = DelayDistribution::pareto;
    } else {
      return fail(key, value, "is not a distribution (use normal, lognormal or pareto)");
    }
    return std::nullopt;
  }
  if (key == "drop_mode") {
    if (value == "rst") {
      spec.drop_mode = DropMode::rst;
    } else if (value == "fin") {
      spec.drop_mode = DropMode::fin;
    } else if (value == "blackhole") {
      spec.drop_mode = DropMode::blackhole;
    } else {
      return fail(key, value, "is not a drop mode (use rst, fin or blackhole)");
    }
    return std::nullopt;
  }
  if (key == "loss")
    return fail(key, value,
                "cannot be emulated: this is a TCP relay and TCP retransmits lost packets; use "
                "stall= to pause a connection or drop= to cut it");
  return Failure{"unknown key \"" + std::string(key) +
                 "\" (keys: delay, jitter, dist, rate, burst, stall, stall_time, drop, "
                 "drop_mode, queue)"};
}

std::string format_us(std::chrono::microseconds us) {
  const auto n = us.count();
  if (n % 1000000 == 0) return std::to_string(n / 1000000) + "s";
  if (n % 1000 == 0) return std::to_string(n / 1000) + "ms";
  return std::to_string(n) + "us";
}

std::string format_rate(std::uint64_t bits) {
  if (bits % 1'000'000'000 == 0) return std::to_string(bits / 1'000'000'000) + "gbit";
  if (bits % 1'000'000 == 0) return std::to_string(bits / 1'000'000) + "mbit";
  if (bits % 1'000 == 0) return std::to_string(bits / 1'000) + "kbit";
  return std::to_string(bits) + "bit";
}

std::string format_double(double v) {
  // Shortest text that reads back as the same double.
  std::array<char, 32> buf{};
  const auto [ptr, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return ec == std::errc() ? std::string(buf.data(), ptr) : std::to_string(v);
}

}  // namespace

bool LinkSpec::pure_relay() const noexcept {
  return delay.count() == 0 && jitter.count() == 0 && rate_bits_per_s == 0 && stall == 0 &&
         drop == 0;
}

LinkSpecResult parse_link_spec(std::string_view text) {
  LinkSpecResult result;
  LinkSpec spec;
  text = trim(text);
  if (text.empty() || text == "none") {
    result.spec = spec;
    return result;
  }
  std::set<std::string, std::less<>> seen;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    const auto eq = item.find('=');
    if (item.empty()) {
      result.error = "empty item in \"" + std::string(text) + "\" (a stray comma?)";
      return result;
    }
    if (eq == std::string_view::npos) {
      result.error = "\"" + std::string(item) + "\" is not key=value";
      return result;
    }
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value = trim(item.substr(eq + 1));
    if (value.empty()) {
      result.error = std::string(key) + ": has no value";
      return result;
    }
    if (!seen.emplace(key).second) {
      result.error = std::string(key) + ": given twice";
      return result;
    }
    if (auto failure = parse_item(key, value, spec)) {
      result.error = std::move(failure->message);
      return result;
    }
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  // The shaped distributions are defined by their mean; a zero mean with a spread has none.
  if (spec.distribution != DelayDistribution::normal && spec.jitter.count() > 0 &&
      spec.delay.count() == 0) {
    result.error = "dist: \"" + std::string(to_string(spec.distribution)) +
                   "\" needs delay > 0 when jitter > 0";
    return result;
  }
  result.spec = spec;
  return result;
}

std::string format_link_spec(const LinkSpec& spec) {
  const LinkSpec defaults;
  std::string out;
  auto add = [&out](std::string_view key, const std::string& value) {
    if (!out.empty()) out += ',';
    out += key;
    out += '=';
    out += value;
  };
  if (spec.delay != defaults.delay) add("delay", format_us(spec.delay));
  if (spec.jitter != defaults.jitter) add("jitter", format_us(spec.jitter));
  if (spec.distribution != defaults.distribution)
    add("dist", std::string(to_string(spec.distribution)));
  if (spec.rate_bits_per_s != defaults.rate_bits_per_s)
    add("rate", format_rate(spec.rate_bits_per_s));
  if (spec.burst_bytes != defaults.burst_bytes) add("burst", std::to_string(spec.burst_bytes));
  if (spec.stall != defaults.stall) add("stall", format_double(spec.stall));
  if (spec.stall_time != defaults.stall_time) add("stall_time", format_us(spec.stall_time));
  if (spec.drop != defaults.drop) add("drop", format_double(spec.drop));
  if (spec.drop_mode != defaults.drop_mode)
    add("drop_mode", std::string(to_string(spec.drop_mode)));
  if (spec.queue_bytes != defaults.queue_bytes) add("queue", std::to_string(spec.queue_bytes));
  return out.empty() ? "none" : out;
}

std::string_view to_string(DelayDistribution d) noexcept {
  switch (d) {
    case DelayDistribution::normal:
      return "normal";
    case DelayDistribution::lognormal:
      return "lognormal";
    case DelayDistribution::pareto:
      return "pareto";
  }
  return "?";
}

std::string_view to_string(DropMode m) noexcept {
  switch (m) {
    case DropMode::rst:
      return "rst";
    case DropMode::fin:
      return "fin";
    case DropMode::blackhole:
      return "blackhole";
  }
  return "?";
}

}  // namespace dsekp::linkemu
