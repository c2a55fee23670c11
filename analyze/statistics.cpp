// Implementation of analyze/statistics.hpp. Formulas follow R's stats package step by step (the
// reference the tests compare against); distributions come from Boost.Math. The rank-sum test
// and Cliff's delta share one merge of the two sorted samples, so both are O(n log n) (the sort)
// plus O(n) with exact integer pair counts.
#include "analyze/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/math/distributions/complement.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace dsekp::analyze {
namespace {

void require_finite(std::span<const double> values, const char* what) {
  for (double v : values) {
    if (!std::isfinite(v)) {
      throw std::invalid_argument(std::string(what) + ": values must be finite (NaN or inf given)");
    }
  }
}

std::vector<double> sorted_copy(std::span<const double> values) {
  std::vector<double> out(values.begin(), values.end());
  std::sort(out.begin(), out.end());
  return out;
}

double as_double(std::size_t n) {
  return static_cast<double>(n);
}

/// Neumaier-compensated sum: the rounding error of every addition is carried along and added
/// back, so the result is within about one ulp of the exact sum for any n. R's mean() and var()
/// accumulate in 80-bit long double for the same reason; a plain double sum over a million
/// latencies would drift by many ulps, and `long double` is not 80-bit everywhere.
class CompensatedSum {
 public:
  void add(double v) {
    const double t = sum_ + v;
    // Whichever operand is smaller lost its low bits in t; recover them exactly.
    compensation_ += std::abs(sum_) >= std::abs(v) ? (sum_ - t) + v : (v - t) + sum_;
    sum_ = t;
  }
  double value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

double mean_of(std::span<const double> x) {
  CompensatedSum sum;
  for (double v : x) sum.add(v);
  return sum.value() / as_double(x.size());
}

/// Sample variance (n - 1 denominator) by the two-pass formula: no catastrophic cancellation for
/// latencies with a large mean and small spread, unlike sum(x^2) - n mean^2. Needs n >= 2.
double variance_of(std::span<const double> x, double mean) {
  CompensatedSum ss;
  for (double v : x) {
    const double d = v - mean;
    ss.add(d * d);
  }
  return ss.value() / as_double(x.size() - 1);
}

/// Reports p-values below DBL_MIN as 0 (see the header) and never above 1.
double reported_p(double p) {
  return p < kSmallestReportedP ? 0.0 : std::min(p, 1.0);
}

/// Everything the rank-sum test and Cliff's delta need, from one walk over the distinct values of
/// the two sorted samples. Counts are integers, so W and the pair counts are exact.
struct PairCounts {
  std::uint64_t twice_rank_sum_a = 0;  // 2 x sum of a's mid-ranks: mid-ranks are half-integers
  std::uint64_t a_greater = 0;         // pairs (i, j) with a_i > b_j
  std::uint64_t a_less = 0;            // pairs with a_i < b_j
  double tie_term = 0;                 // sum over tie groups of t^3 - t (R: sum(NTIES^3 - NTIES))
  bool all_tied = false;               // a single distinct value across both samples
};

PairCounts count_pairs(std::span<const double> a, std::span<const double> b) {
  PairCounts out;
  const std::uint64_t nb = b.size();
  std::size_t i = 0;
  std::size_t j = 0;
  std::uint64_t below = 0;    // values of both samples strictly below the current one
  std::uint64_t b_below = 0;  // values of b strictly below the current one
  std::size_t groups = 0;
  while (i < a.size() || j < b.size()) {
    const double v = j == b.size() ? a[i] : i == a.size() ? b[j] : std::min(a[i], b[j]);
    std::uint64_t ca = 0;
    std::uint64_t cb = 0;
    for (; i < a.size() && a[i] == v; ++i) ++ca;
    for (; j < b.size() && b[j] == v; ++j) ++cb;
    const std::uint64_t t = ca + cb;
    // The group occupies ranks below+1 .. below+t; its mid-rank is below + (t + 1) / 2.
    out.twice_rank_sum_a += ca * (2 * below + t + 1);
    const double td = static_cast<double>(t);
    out.tie_term += td * td * td - td;
    out.a_greater += ca * b_below;
    out.a_less += ca * (nb - b_below - cb);
    below += t;
    b_below += cb;
    ++groups;
  }
  out.all_tied = groups == 1;
  return out;
}

}  // namespace

double quantile_type7(std::span<const double> sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("quantile_type7: empty sample");
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("quantile_type7: p outside [0, 1]");
  // Same arithmetic as R's quantile.default (type 7), 1-based index, so results match to the ulp.
  const double index = 1.0 + as_double(sorted.size() - 1) * p;
  const double lo = std::floor(index);
  const auto lo_i = static_cast<std::size_t>(lo) - 1;
  const auto hi_i = static_cast<std::size_t>(std::ceil(index)) - 1;
  const double q = sorted[lo_i];
  if (index > lo && sorted[hi_i] != q) {
    const double h = index - lo;
    return (1 - h) * q + h * sorted[hi_i];
  }
  return q;
}

Descriptive describe(std::span<const double> values) {
  require_finite(values, "describe");
  const std::vector<double> sorted = sorted_copy(values);
  return describe_sorted(sorted);
}

Descriptive describe_sorted(std::span<const double> sorted) {
  require_finite(sorted, "describe_sorted");
  if (!std::is_sorted(sorted.begin(), sorted.end())) {
    throw std::invalid_argument("describe_sorted: input is not sorted ascending");
  }
  Descriptive d;
  d.n = sorted.size();
  if (d.n == 0) return d;
  const double mean = mean_of(sorted);
  d.mean = mean;
  d.median = quantile_type7(sorted, 0.5);
  d.p95 = quantile_type7(sorted, 0.95);
  d.p99 = quantile_type7(sorted, 0.99);
  d.min = sorted.front();
  d.max = sorted.back();
  if (d.n >= 2) {
    const double sd = std::sqrt(variance_of(sorted, mean));
    d.sd = sd;
    const boost::math::students_t_distribution<double> t_dist(as_double(d.n - 1));
    const double half = boost::math::quantile(t_dist, 0.975) * sd / std::sqrt(as_double(d.n));
    d.ci95_low = mean - half;
    d.ci95_high = mean + half;
  }
  return d;
}

std::optional<TTest> welch_t_test(std::span<const double> a, std::span<const double> b) {
  require_finite(a, "welch_t_test");
  require_finite(b, "welch_t_test");
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  const double na = as_double(a.size());
  const double nb = as_double(b.size());
  const double mean_a = mean_of(a);
  const double mean_b = mean_of(b);
  const double var_mean_a = variance_of(a, mean_a) / na;  // squared standard error of each mean
  const double var_mean_b = variance_of(b, mean_b) / nb;
  const double se = std::sqrt(var_mean_a + var_mean_b);
  // R's guard: a difference this small relative to the means is rounding noise, not signal.
  if (se <
      10 * std::numeric_limits<double>::epsilon() * std::max(std::abs(mean_a), std::abs(mean_b))) {
    return std::nullopt;
  }
  // Welch–Satterthwaite df = s^4 / (sa^4/(na-1) + sb^4/(nb-1)) with s^2 = sa^2 + sb^2, written with
  // the shares sa^2/s^2 so that it cannot underflow or overflow for tiny or huge scales.
  const double share_a = var_mean_a / (var_mean_a + var_mean_b);
  const double share_b = var_mean_b / (var_mean_a + var_mean_b);
  TTest out;
  out.t = (mean_a - mean_b) / se;
  out.df = 1.0 / (share_a * share_a / (na - 1) + share_b * share_b / (nb - 1));
  if (!std::isfinite(out.t) || !std::isfinite(out.df)) return std::nullopt;
  const boost::math::students_t_distribution<double> t_dist(out.df);
  // Upper tail of |t| directly: 2 * (1 - cdf) would lose everything below ~1e-16.
  out.p = reported_p(2 * boost::math::cdf(boost::math::complement(t_dist, std::abs(out.t))));
  return out;
}

std::optional<RankSumTest> wilcoxon_rank_sum(std::span<const double> a, std::span<const double> b) {
  require_finite(a, "wilcoxon_rank_sum");
  require_finite(b, "wilcoxon_rank_sum");
  if (a.empty() || b.empty()) return std::nullopt;
  const std::vector<double> sa = sorted_copy(a);
  const std::vector<double> sb = sorted_copy(b);
  const PairCounts c = count_pairs(sa, sb);
  if (c.all_tied) return std::nullopt;  // sigma = 0: z and p undefined (R: p = NA)

  const double na = as_double(a.size());
  const double nb = as_double(b.size());
  const double n = na + nb;
  RankSumTest out;
  // 2 * rank sum - na (na + 1) is even or odd exactly as 2W; halving a double is exact.
  out.w = (static_cast<double>(c.twice_rank_sum_a) - na * (na + 1)) / 2;
  const double centred = out.w - na * nb / 2;
  const double sigma = std::sqrt((na * nb / 12) * ((n + 1) - c.tie_term / (n * (n - 1))));
  // R's continuity correction moves the statistic towards 0 by 0.5: sign(centred) * 0.5 (0 at 0).
  const double correction = centred > 0 ? 0.5 : centred < 0 ? -0.5 : 0.0;
  out.z = (centred - correction) / sigma;
  const boost::math::normal_distribution<double> normal;
  out.p = reported_p(2 * boost::math::cdf(boost::math::complement(normal, std::abs(out.z))));
  return out;
}

std::optional<double> cohens_d(std::span<const double> a, std::span<const double> b) {
  require_finite(a, "cohens_d");
  require_finite(b, "cohens_d");
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  const double na = as_double(a.size());
  const double nb = as_double(b.size());
  const double mean_a = mean_of(a);
  const double mean_b = mean_of(b);
  const double pooled = std::sqrt(
      ((na - 1) * variance_of(a, mean_a) + (nb - 1) * variance_of(b, mean_b)) / (na + nb - 2));
  if (!(pooled > 0) || !std::isfinite(pooled)) return std::nullopt;
  return (mean_a - mean_b) / pooled;
}

std::optional<double> cliffs_delta(std::span<const double> a, std::span<const double> b) {
  require_finite(a, "cliffs_delta");
  require_finite(b, "cliffs_delta");
  if (a.empty() || b.empty()) return std::nullopt;
  const std::vector<double> sa = sorted_copy(a);
  const std::vector<double> sb = sorted_copy(b);
  const PairCounts c = count_pairs(sa, sb);
  // Exact integer difference first, then one rounding in the division.
  const double diff = c.a_greater >= c.a_less ? static_cast<double>(c.a_greater - c.a_less)
                                              : -static_cast<double>(c.a_less - c.a_greater);
  return diff / (as_double(a.size()) * as_double(b.size()));
}

}  // namespace dsekp::analyze
