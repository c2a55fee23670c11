// Per-chunk random draws (see chunk_draws.hpp). The shaped distributions are parameterised so
// that their mean is `delay` and their standard deviation `jitter`, like the normal one.
#include "linkemu/chunk_draws.hpp"

#include <algorithm>
#include <cmath>

namespace dsekp::linkemu {

ChunkDraws::ChunkDraws(const LinkSpec& spec, std::uint64_t seed) : engine_(seed) {
  set_spec(spec);
}

void ChunkDraws::set_spec(const LinkSpec& spec) {
  spec_ = spec;
  const double mean = static_cast<double>(std::chrono::nanoseconds(spec.delay).count());
  const double sd = static_cast<double>(std::chrono::nanoseconds(spec.jitter).count());
  normal_ = std::normal_distribution<double>(mean, sd > 0 ? sd : 1.0);
  if (mean > 0 && sd > 0) {
    // Lognormal with mean m and sd s: sigma^2 = ln(1 + s^2/m^2), mu = ln(m) - sigma^2/2.
    const double sigma2 = std::log1p((sd * sd) / (mean * mean));
    lognormal_ =
        std::lognormal_distribution<double>(std::log(mean) - sigma2 / 2, std::sqrt(sigma2));
    // Pareto(x_m, alpha) with mean m and sd s: alpha (alpha - 2) = m^2/s^2, so
    // alpha = 1 + sqrt(1 + m^2/s^2) (always > 2: the variance exists), x_m = m (alpha-1)/alpha.
    const double alpha = 1 + std::sqrt(1 + (mean * mean) / (sd * sd));
    exponential_ = std::exponential_distribution<double>(alpha);
    pareto_scale_ns_ = mean * (alpha - 1) / alpha;
  }
  stall_ = std::bernoulli_distribution(spec.stall);
  drop_ = std::bernoulli_distribution(spec.drop);
}

std::chrono::nanoseconds ChunkDraws::delay() {
  const auto mean = std::chrono::nanoseconds(spec_.delay);
  if (spec_.jitter.count() == 0) return mean;
  double ns = 0;
  switch (spec_.distribution) {
    case DelayDistribution::normal:
      ns = normal_(engine_);
      break;
    case DelayDistribution::lognormal:
      ns = lognormal_(engine_);
      break;
    case DelayDistribution::pareto:
      ns = pareto_scale_ns_ * std::exp(exponential_(engine_));
      break;
  }
  // The heavy tail is cut at one hour, where a std::chrono conversion would still be exact.
  ns = std::clamp(ns, 0.0, 3600e9);
  return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

bool ChunkDraws::stall() {
  return spec_.stall > 0 && stall_(engine_);
}

bool ChunkDraws::drop() {
  return spec_.drop > 0 && drop_(engine_);
}

}  // namespace dsekp::linkemu
