// The random part of the link: for each relayed chunk, its one-way delay and whether it starts a
// stall or a drop, drawn with <random> distributions from one engine seeded by the caller.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "linkemu/link_spec.hpp"

namespace dsekp::linkemu {

class ChunkDraws {
 public:
  ChunkDraws(const LinkSpec& spec, std::uint64_t seed);

  /// Uses `spec` for every later draw; the engine's sequence continues.
  void set_spec(const LinkSpec& spec);

  /// A one-way delay from the spec's distribution (mean `delay`, standard deviation `jitter`),
  /// never negative. Exactly `delay` when jitter is 0.
  [[nodiscard]] std::chrono::nanoseconds delay();
  /// True with the spec's `stall` probability.
  [[nodiscard]] bool stall();
  /// True with the spec's `drop` probability.
  [[nodiscard]] bool drop();

 private:
  std::mt19937_64 engine_;
  LinkSpec spec_;
  std::normal_distribution<double> normal_;
  std::lognormal_distribution<double> lognormal_;
  std::exponential_distribution<double> exponential_;  // for Pareto: x_m * exp(Exp(alpha))
  double pareto_scale_ns_ = 0;
  std::bernoulli_distribution stall_;
  std::bernoulli_distribution drop_;
};

}  // namespace dsekp::linkemu
