// Percentiles, targets and machine load (see figures.hpp).
#include "figures.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

#include "analyze/statistics.hpp"

namespace dsekp::bench::e2e {
namespace {

nlohmann::ordered_json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

Percentiles percentiles(std::span<const double> values) {
  const analyze::Descriptive d = analyze::describe(values);
  Percentiles p;
  p.n = d.n;
  p.p50 = d.median;
  p.p95 = d.p95;
  p.p99 = d.p99;
  p.mean = d.mean;
  p.min = d.min;
  p.max = d.max;
  return p;
}

Target latency_parity_target(const std::optional<double>& psk_p50_us,
                             const std::optional<double>& dsekp_p50_us) {
  Target t;
  t.id = "dsekp_p50_vs_psk_p50";
  t.unit = "us";
  if (psk_p50_us) t.limit = std::max(0.05 * *psk_p50_us, 10.0);
  char text[200];
  std::snprintf(text, sizeof text, "DSEKP p50 - PSK p50 <= max(5%% of PSK p50, 10 us) = %.1f us",
                t.limit);
  t.description = text;
  if (psk_p50_us && dsekp_p50_us) {
    t.value = *dsekp_p50_us - *psk_p50_us;
    t.met = *t.value <= t.limit;
  }
  return t;
}

Target handshake_target(const std::optional<double>& p50_us, double limit_us) {
  Target t;
  t.id = "handshake_p50";
  t.unit = "us";
  t.limit = limit_us;
  char text[160];
  std::snprintf(text, sizeof text, "INIT->ACK handshake p50 < %.0f us", limit_us);
  t.description = text;
  t.value = p50_us;
  t.met = p50_us && *p50_us < limit_us;
  return t;
}

Target delivery_target(const std::string& id, const std::string& what, std::uint64_t sent,
                       std::uint64_t received) {
  Target t;
  t.id = id;
  t.unit = "%";
  t.limit = 100;
  t.description = what + " delivery ratio = 100 % (every frame sent was logged by the edge)";
  if (sent > 0) {
    t.value = 100.0 * static_cast<double>(received) / static_cast<double>(sent);
    t.met = received == sent;
  }
  return t;
}

nlohmann::ordered_json to_json(const Percentiles& p) {
  return {{"n", p.n},
          {"p50", optional_number(p.p50)},
          {"p95", optional_number(p.p95)},
          {"p99", optional_number(p.p99)},
          {"mean", optional_number(p.mean)},
          {"min", optional_number(p.min)},
          {"max", optional_number(p.max)}};
}

nlohmann::ordered_json to_json(const Target& t) {
  return {{"id", t.id},       {"description", t.description},
          {"unit", t.unit},   {"value", optional_number(t.value)},
          {"limit", t.limit}, {"met", t.met}};
}

const char* verdict(const Target& t) {
  return t.met ? "met" : "NOT met";
}

MachineLoad machine_load() {
  MachineLoad l;
  std::ifstream in("/proc/loadavg");
  in >> l.load1 >> l.load5 >> l.load15;
  l.cpus = std::thread::hardware_concurrency();
  return l;
}

nlohmann::ordered_json to_json(const MachineLoad& l) {
  return {{"load1", l.load1}, {"load5", l.load5}, {"load15", l.load15}, {"cpus", l.cpus}};
}
}  // namespace dsekp::bench::e2e
