// The DHT11-like random-walk sensor (see sensor_model.hpp).
#include "device/sensor_model.hpp"

#include <cmath>
#include <cstdio>

namespace dsekp::device {
namespace {

std::int32_t to_steps(double value, double resolution) noexcept {
  return static_cast<std::int32_t>(std::lround(value / resolution));
}

}  // namespace

SensorModel::Walk SensorModel::start(const QuantitySpec& spec, SimRandom& random) noexcept {
  Walk w;
  w.resolution = spec.resolution;
  w.min_steps = to_steps(spec.min, spec.resolution);
  w.max_steps = to_steps(spec.max, spec.resolution);
  std::int32_t lo = to_steps(spec.start_min, spec.resolution);
  std::int32_t hi = to_steps(spec.start_max, spec.resolution);
  if (lo < w.min_steps) lo = w.min_steps;
  if (hi > w.max_steps) hi = w.max_steps;
  if (hi < lo) hi = lo;
  w.steps = lo + static_cast<std::int32_t>(random.below(static_cast<std::uint64_t>(hi - lo) + 1));
  return w;
}

SensorModel::SensorModel(const SensorSpec& spec, std::uint64_t seed) noexcept : random_(seed) {
  temperature_ = start(spec.temperature_c, random_);
  humidity_ = start(spec.humidity_pct, random_);
}

void SensorModel::move(Walk& w) noexcept {
  const std::uint64_t r = random_.below(10);  // 0: down, 1: up, 2..9: stay
  std::int32_t next = w.steps;
  if (r == 0) --next;
  if (r == 1) ++next;
  // Reflect at the bounds, so the walk neither sticks to a bound nor leaves the range.
  if (next < w.min_steps) next = w.min_steps + 1 <= w.max_steps ? w.min_steps + 1 : w.min_steps;
  if (next > w.max_steps) next = w.max_steps - 1 >= w.min_steps ? w.max_steps - 1 : w.max_steps;
  w.steps = next;
}

Reading SensorModel::next() noexcept {
  if (started_) {
    move(temperature_);
    move(humidity_);
  }
  started_ = true;
  return Reading{temperature_.steps * temperature_.resolution,
                 humidity_.steps * humidity_.resolution};
}

std::size_t SensorModel::format(const Reading& reading, std::span<char, 64> out) noexcept {
  const int n = std::snprintf(out.data(), out.size(), "{\"t\":%.1f,\"h\":%.1f}",
                              reading.temperature_c, reading.humidity_pct);
  return n < 0 ? 0 : static_cast<std::size_t>(n) < out.size() ? static_cast<std::size_t>(n) : 63;
}

std::string SensorModel::format(const Reading& reading) {
  char buf[64];
  const std::size_t n = format(reading, std::span<char, 64>(buf));
  return std::string(buf, n);
}

}  // namespace dsekp::device
