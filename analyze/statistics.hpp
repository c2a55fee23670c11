// The statistics `dsekp analyze` reports, on full data (no sampling), built on Boost.Math's
// distributions (no hand-written special functions). Every definition that has variants says
// which one is used; tests/analyze checks each against reference values computed offline in R
// (tests/analyze/reference/compute_reference.R).
//
// Inputs: every value must be finite; a NaN or infinity throws std::invalid_argument (a NaN would
// silently break sorting and every rank, so it is refused rather than propagated). Filtering
// (e.g. the paper's 10 s outlier cut) is the caller's job: these functions use every value given.
//
// p-values are computed from the tail directly (Boost cdf(complement(...))), never as 1 - cdf, so
// they keep full relative precision down to kSmallestReportedP = DBL_MIN ~ 2.2250738585072014e-308.
// A p-value below that is reported as exactly 0.0, meaning "p < 2.2e-308" (the paper's rank-sum
// "p = 0"): subnormal doubles would carry fewer significant bits, and R's pnorm() flushes to 0 at
// the same point, so 0 there agrees with R's wilcox.test.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace dsekp::analyze {

/// The smallest non-zero p-value welch_t_test and wilcoxon_rank_sum report; smaller is 0.0.
inline constexpr double kSmallestReportedP = std::numeric_limits<double>::min();

/// Descriptive statistics of one sample. Fields that need more data than there is are empty:
/// sd, ci95 and the tests need n >= 2; everything is empty for n == 0.
struct Descriptive {
  std::size_t n = 0;
  std::optional<double> mean;
  std::optional<double> sd;        // sample standard deviation (n - 1 denominator)
  std::optional<double> ci95_low;  // mean -/+ t(0.975, n-1) * sd / sqrt(n); [mean, mean] if sd = 0
  std::optional<double> ci95_high;
  std::optional<double> median;
  std::optional<double> p95;  // percentiles: R's default (type 7, linear interpolation)
  std::optional<double> p99;
  std::optional<double> min;
  std::optional<double> max;
};

/// Computes Descriptive of `values` (any order; the function sorts a copy).
Descriptive describe(std::span<const double> values);

/// Same, for a sample that is already sorted ascending (no copy). Throws std::invalid_argument if
/// it is not sorted (checked, O(n): an unsorted input would give wrong percentiles silently).
Descriptive describe_sorted(std::span<const double> sorted);

/// R's quantile type 7 of a sorted, non-empty sample, p in [0, 1]: with h = (n - 1) p,
/// x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]) (0-based). Throws
/// std::invalid_argument for an empty sample or p outside [0, 1].
double quantile_type7(std::span<const double> sorted, double p);

/// Welch's two-sample t-test (unequal variances), two-sided, as R's t.test(a, b). Empty when a
/// side has fewer than 2 values, or when the standard error of the difference is below
/// 10 eps max(|mean_a|, |mean_b|) (both samples (essentially) constant; R: "data are essentially
/// constant"). t > 0 when mean_a > mean_b.
struct TTest {
  double t = 0;
  double df = 0;  // Welch–Satterthwaite
  double p = 0;
};
std::optional<TTest> welch_t_test(std::span<const double> a, std::span<const double> b);

/// Wilcoxon rank-sum (Mann–Whitney U) test, two-sided, normal approximation with tie correction
/// and continuity correction (0.5), as R's wilcox.test(a, b, exact = FALSE, correct = TRUE).
/// W is the rank sum of `a` minus n_a (n_a + 1) / 2 (R's statistic). O(n log n).
/// z = (W - n_a n_b / 2 - 0.5 sign(W - n_a n_b / 2)) / sigma, sigma tie-corrected;
/// p = 2 min(Phi(z), 1 - Phi(z)), both tails computed directly. Empty when a side is empty, or when
/// every value is the same (sigma = 0: R returns p = NA).
struct RankSumTest {
  double w = 0;
  double z = 0;
  double p = 0;
};
std::optional<RankSumTest> wilcoxon_rank_sum(std::span<const double> a, std::span<const double> b);

/// Cohen's d = (mean_a - mean_b) / pooled SD, pooled SD = sqrt(((na-1) sa^2 + (nb-1) sb^2) /
/// (na + nb - 2)). Empty when either sample has fewer than 2 values or the pooled SD is 0.
std::optional<double> cohens_d(std::span<const double> a, std::span<const double> b);

/// Cliff's delta = P(a > b) - P(a < b) over all pairs, computed by sorting (O(n log n)).
/// Sign convention: with a = PSK and b = DSEKP latencies, a negative value means PSK tends to be
/// lower (the paper's -0.416). Empty if either sample is empty.
std::optional<double> cliffs_delta(std::span<const double> a, std::span<const double> b);

}  // namespace dsekp::analyze
