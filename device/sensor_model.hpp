// A DHT11-like temperature and humidity sensor: each reading is a bounded random walk at the
// sensor's resolution, reproducible from a seed. Produces the paper's reading text
// {"t":24.0,"h":51.0} that the device encrypts.
//
// Model: the DHT11 reports whole degrees Celsius over 0..50 and whole %RH over 20..90. Each
// quantity starts at a uniform value inside an indoor range and, per reading, stays with
// probability 0.8 or moves one resolution step up or down (0.1 each); a step that would leave
// the range is reflected back inside. Real DHT11 output at 2 s intervals looks like this: long
// runs of one value with single-step flicker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "device/sim_random.hpp"

namespace dsekp::device {

/// One measured quantity: range, resolution and the range the walk starts in.
struct QuantitySpec {
  double min = 0;
  double max = 0;
  double resolution = 1;
  double start_min = 0;
  double start_max = 0;
};

struct SensorSpec {
  QuantitySpec temperature_c{0, 50, 1, 18, 30};
  QuantitySpec humidity_pct{20, 90, 1, 35, 65};
};

/// The DHT11 of the paper's testbed.
[[nodiscard]] inline SensorSpec dht11() {
  return SensorSpec{};
}

struct Reading {
  double temperature_c = 0;
  double humidity_pct = 0;
};

class SensorModel {
 public:
  SensorModel(const SensorSpec& spec, std::uint64_t seed) noexcept;

  /// The next reading (the first call returns the starting values).
  Reading next() noexcept;

  /// The paper's reading text, one decimal: {"t":24.0,"h":51.0}. Writes into `out` (64 bytes
  /// are always enough) and returns the length.
  static std::size_t format(const Reading& reading, std::span<char, 64> out) noexcept;
  [[nodiscard]] static std::string format(const Reading& reading);

 private:
  struct Walk {
    std::int32_t steps = 0;  // value = steps * resolution
    std::int32_t min_steps = 0;
    std::int32_t max_steps = 0;
    double resolution = 1;
  };
  static Walk start(const QuantitySpec& spec, SimRandom& random) noexcept;
  void move(Walk& walk) noexcept;

  SimRandom random_;
  Walk temperature_;
  Walk humidity_;
  bool started_ = false;
};

}  // namespace dsekp::device
