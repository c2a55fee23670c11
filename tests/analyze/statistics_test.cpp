// analyze/statistics against R: every fixture under reference/fixtures is run through each
// function and compared with reference/expected.json (computed by reference/compute_reference.R;
// R is not needed to run this test). Plus properties R cannot cheaply check: the sort-based rank
// counts against brute force, symmetry under swapping samples, exactness at 300 000 values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/statistics.hpp"

#ifndef DSEKP_STATS_REFERENCE_DIR
#error "DSEKP_STATS_REFERENCE_DIR must name tests/analyze/reference (see statistics.cmake)"
#endif

namespace dsekp::analyze {
namespace {

using nlohmann::json;

// Relative tolerances against R. The worst deviation measured over all fixtures (R 4.2.2, Boost
// 1.74, GCC 12, x86-64) is in brackets; each tolerance leaves >= 100x headroom for other
// platforms and library versions, yet is far below what any formula mistake causes (n vs n - 1
// in sd: 2.5e-3 relative at n = 200; dropping the continuity correction: > 1e-3 on p).
// - Order statistics and everything from exact integer counts (quantiles use R's arithmetic,
//   Cliff's delta is an exact count divided once): 2 ulps. min, max, W are compared exactly.
constexpr double kOrderTol = 4e-16;  // [0]
// - Mean: R accumulates in 80-bit long double, here a compensated double sum; both are within an
//   ulp or so of the exact sum, then divide once.
constexpr double kMeanTol = 1e-13;  // [0]
// - sd, CI, t, df, z, Cohen's d: a few more roundings (two-pass variance, square roots, and for
//   the CI Boost's vs R's t quantile, both accurate to ~1e-15).
constexpr double kMomentTol = 1e-11;  // [2.1e-15]
// - p-values: Boost's incomplete beta / erfc vs R's pt / pnorm. Relative, so a p of 1e-84 is held
//   to the same precision as 0.05: that is the point of computing tails directly.
constexpr double kPTol = 1e-9;  // [5.4e-14]

// Every fixture; CaseListMatchesExpectedJson fails if expected.json has a case not listed here.
const std::vector<std::string> kCases = {"all_equal",   "all_equal_shifted",
                                         "decimals",    "empty_a",
                                         "empty_both",  "identical",
                                         "n1",          "n1_n1",
                                         "n2",          "normal_ties",
                                         "outliers",    "separated",
                                         "subnormal_t", "tiny_p"};

const std::string kReferenceDir = DSEKP_STATS_REFERENCE_DIR;

const json& expected_json() {
  static const json doc = [] {
    std::ifstream in(kReferenceDir + "/expected.json");
    if (!in) throw std::runtime_error("cannot open " + kReferenceDir + "/expected.json");
    return json::parse(in);
  }();
  return doc;
}

const json& expected_case(const std::string& name) {
  for (const json& c : expected_json().at("cases")) {
    if (c.at("name") == name) return c;
  }
  throw std::runtime_error("no case " + name + " in expected.json");
}

struct Samples {
  std::vector<double> a;
  std::vector<double> b;
};

/// Reads fixtures/<name>.csv (`sample,value_ms`). strtod rounds correctly, and the fixture values
/// have few digits, so this must give exactly the doubles R parsed (FixtureParsesLikeR checks).
Samples read_fixture(const std::string& name) {
  const std::string path = kReferenceDir + "/fixtures/" + name + ".csv";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  std::getline(in, line);
  if (line != "sample,value_ms") throw std::runtime_error("bad header in " + path);
  Samples s;
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    if (comma == std::string::npos) throw std::runtime_error("bad row in " + path + ": " + line);
    const std::string side = line.substr(0, comma);
    const std::string text = line.substr(comma + 1);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') throw std::runtime_error("bad value: " + line);
    (side == "a" ? s.a : s.b).push_back(v);
  }
  return s;
}

std::vector<double> values_of(const json& array) {
  return array.get<std::vector<double>>();
}

/// `actual` must be empty exactly where R gave null, and otherwise within `rel` of it.
void expect_close(const std::optional<double>& actual, const json& expected, double rel,
                  const std::string& what) {
  if (expected.is_null()) {
    EXPECT_FALSE(actual.has_value()) << what << ": R has no value, got " << *actual;
    return;
  }
  ASSERT_TRUE(actual.has_value()) << what << ": R has " << expected.get<double>() << ", got none";
  const double e = expected.get<double>();
  EXPECT_LE(std::abs(*actual - e), rel * std::abs(e))
      << what << ": got " << *actual << ", R " << e << " (relative tolerance " << rel << ")";
}

/// p-values: R's value, except that below kSmallestReportedP the reported value is exactly 0 by
/// design (R's pnorm flushes there too; its pt returns a subnormal, see subnormal_t).
void expect_p(double actual, const json& expected, const std::string& what) {
  const double e = expected.get<double>();
  if (e < kSmallestReportedP) {
    EXPECT_EQ(actual, 0.0) << what << ": R " << e << " is below DBL_MIN, must be reported as 0";
  } else {
    expect_close(actual, expected, kPTol, what);
  }
}

class StatisticsReference : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    expected_ = &expected_case(GetParam());
    samples_ = read_fixture(GetParam());
  }
  const json& expected() const { return *expected_; }
  const json* expected_ = nullptr;
  Samples samples_;
};

TEST_P(StatisticsReference, FixtureParsesLikeR) {
  // Bit-identical inputs on both sides, so every difference below is the computation's.
  EXPECT_EQ(samples_.a, values_of(expected().at("a_values")));
  EXPECT_EQ(samples_.b, values_of(expected().at("b_values")));
}

void expect_describe(const std::vector<double>& values, const json& e, const std::string& side) {
  const Descriptive d = describe(values);
  EXPECT_EQ(d.n, e.at("n").get<std::size_t>()) << side;
  expect_close(d.mean, e.at("mean"), kMeanTol, side + ".mean");
  expect_close(d.sd, e.at("sd"), kMomentTol, side + ".sd");
  expect_close(d.ci95_low, e.at("ci95_low"), kMomentTol, side + ".ci95_low");
  expect_close(d.ci95_high, e.at("ci95_high"), kMomentTol, side + ".ci95_high");
  expect_close(d.median, e.at("median"), kOrderTol, side + ".median");
  expect_close(d.p95, e.at("p95"), kOrderTol, side + ".p95");
  expect_close(d.p99, e.at("p99"), kOrderTol, side + ".p99");
  expect_close(d.min, e.at("min"), 0.0, side + ".min");
  expect_close(d.max, e.at("max"), 0.0, side + ".max");
}

TEST_P(StatisticsReference, DescribeMatchesR) {
  expect_describe(samples_.a, expected().at("describe_a"), "a");
  expect_describe(samples_.b, expected().at("describe_b"), "b");
}

TEST_P(StatisticsReference, WelchTTestMatchesR) {
  const std::optional<TTest> t = welch_t_test(samples_.a, samples_.b);
  const json& e = expected().at("welch");
  ASSERT_EQ(t.has_value(), !e.is_null()) << "R refuses exactly when this is empty";
  if (!t) return;
  expect_close(t->t, e.at("t"), kMomentTol, "t");
  expect_close(t->df, e.at("df"), kMomentTol, "df");
  expect_p(t->p, e.at("p"), "p");
}

TEST_P(StatisticsReference, RankSumMatchesR) {
  const std::optional<RankSumTest> r = wilcoxon_rank_sum(samples_.a, samples_.b);
  const json& e = expected().at("wilcox");
  ASSERT_EQ(r.has_value(), !e.is_null()) << "R refuses or gives p = NA exactly when this is empty";
  if (!r) return;
  EXPECT_EQ(r->w, e.at("w").get<double>()) << "W is an exact half-integer";
  expect_close(r->z, e.at("z"), kMomentTol, "z");
  expect_p(r->p, e.at("p"), "p");
}

TEST_P(StatisticsReference, CohensDMatchesR) {
  expect_close(cohens_d(samples_.a, samples_.b), expected().at("cohens_d"), kMomentTol, "d");
}

TEST_P(StatisticsReference, CliffsDeltaMatchesR) {
  expect_close(cliffs_delta(samples_.a, samples_.b), expected().at("cliffs_delta"), kOrderTol,
               "delta");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, StatisticsReference, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

TEST(StatisticsReferenceFile, CaseListMatchesExpectedJson) {
  std::vector<std::string> names;
  for (const json& c : expected_json().at("cases")) names.push_back(c.at("name"));
  std::vector<std::string> listed = kCases;
  std::sort(names.begin(), names.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(names, listed);
}

TEST(StatisticsReferenceFile, CoversTheRequiredSituations) {
  // Guards against a regenerated expected.json that quietly loses a kind of case.
  EXPECT_TRUE(expected_case("empty_both").at("wilcox").is_null());
  EXPECT_EQ(expected_case("separated").at("wilcox").at("p").get<double>(), 0.0);
  EXPECT_LT(expected_case("tiny_p").at("welch").at("p").get<double>(), 1e-80);
  EXPECT_GT(expected_case("tiny_p").at("welch").at("p").get<double>(), 0.0);
  EXPECT_LT(expected_case("subnormal_t").at("welch").at("p").get<double>(), kSmallestReportedP);
  EXPECT_GT(expected_case("outliers").at("describe_a").at("max").get<double>(), 10000.0);
  EXPECT_EQ(expected_case("n1").at("describe_a").at("n").get<int>(), 1);
}

// ---- Properties and edge cases -------------------------------------------------------------

TEST(Quantile7, InterpolatesLikeR) {
  const std::vector<double> x = {1, 2, 3, 4};
  EXPECT_EQ(quantile_type7(x, 0.0), 1.0);
  EXPECT_EQ(quantile_type7(x, 1.0), 4.0);
  EXPECT_EQ(quantile_type7(x, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile_type7(x, 0.95), 3.85);  // h = 1 + 3 * 0.95 = 3.85
  const std::vector<double> one = {7};
  EXPECT_EQ(quantile_type7(one, 0.99), 7.0);
  const std::vector<double> flat = {5, 5, 5};
  EXPECT_EQ(quantile_type7(flat, 0.37), 5.0);  // no interpolation noise between equal values
}

TEST(Quantile7, RejectsEmptyAndBadP) {
  const std::vector<double> x = {1, 2};
  EXPECT_THROW(quantile_type7(std::span<const double>{}, 0.5), std::invalid_argument);
  EXPECT_THROW(quantile_type7(x, -0.01), std::invalid_argument);
  EXPECT_THROW(quantile_type7(x, 1.01), std::invalid_argument);
  EXPECT_THROW(quantile_type7(x, std::nan("")), std::invalid_argument);
}

TEST(Describe, EmptySampleHasOnlyN) {
  const Descriptive d = describe({});
  EXPECT_EQ(d.n, 0u);
  EXPECT_FALSE(d.mean || d.sd || d.ci95_low || d.ci95_high || d.median || d.p95 || d.p99 || d.min ||
               d.max);
}

TEST(Describe, SortedAndUnsortedAgree) {
  const Samples s = read_fixture("normal_ties");
  std::vector<double> sorted = s.a;
  std::sort(sorted.begin(), sorted.end());
  const Descriptive u = describe(s.a);
  const Descriptive o = describe_sorted(sorted);
  EXPECT_EQ(u.p95, o.p95);
  EXPECT_EQ(u.p99, o.p99);
  EXPECT_EQ(u.median, o.median);
  EXPECT_DOUBLE_EQ(*u.mean, *o.mean);
  EXPECT_DOUBLE_EQ(*u.sd, *o.sd);
}

TEST(Describe, SortedRejectsUnsortedInput) {
  const std::vector<double> x = {3, 1, 2};
  EXPECT_THROW(describe_sorted(x), std::invalid_argument);
}

TEST(Statistics, NonFiniteValuesAreRefused) {
  const std::vector<double> ok = {1, 2, 3};
  for (const double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    const std::vector<double> x = {1, bad, 3};
    EXPECT_THROW(describe(x), std::invalid_argument);
    EXPECT_THROW(welch_t_test(x, ok), std::invalid_argument);
    EXPECT_THROW(wilcoxon_rank_sum(ok, x), std::invalid_argument);
    EXPECT_THROW(cohens_d(x, ok), std::invalid_argument);
    EXPECT_THROW(cliffs_delta(ok, x), std::invalid_argument);
  }
}

TEST(Statistics, SwappingSamplesMirrorsEveryStatistic) {
  const Samples s = read_fixture("normal_ties");
  const auto ab_t = welch_t_test(s.a, s.b);
  const auto ba_t = welch_t_test(s.b, s.a);
  ASSERT_TRUE(ab_t && ba_t);
  EXPECT_EQ(ab_t->t, -ba_t->t);
  EXPECT_EQ(ab_t->p, ba_t->p);
  const auto ab_w = wilcoxon_rank_sum(s.a, s.b);
  const auto ba_w = wilcoxon_rank_sum(s.b, s.a);
  ASSERT_TRUE(ab_w && ba_w);
  EXPECT_EQ(ab_w->w + ba_w->w, static_cast<double>(s.a.size() * s.b.size()));
  EXPECT_EQ(ab_w->z, -ba_w->z);
  EXPECT_EQ(ab_w->p, ba_w->p);
  EXPECT_EQ(*cohens_d(s.a, s.b), -*cohens_d(s.b, s.a));
  EXPECT_EQ(*cliffs_delta(s.a, s.b), -*cliffs_delta(s.b, s.a));
}

TEST(Statistics, PaperSignConvention) {
  // a = PSK lower than b = DSEKP: d and delta negative, as the paper's -0.486 / -0.416.
  const std::vector<double> psk = {270, 274, 280, 290, 300};
  const std::vector<double> dsekp = {290, 350, 355, 360, 380};
  EXPECT_LT(*cohens_d(psk, dsekp), 0);
  EXPECT_LT(*cliffs_delta(psk, dsekp), 0);
  EXPECT_LT(welch_t_test(psk, dsekp)->t, 0);
  EXPECT_LT(wilcoxon_rank_sum(psk, dsekp)->z, 0);
}

/// O(na nb) reference counts, the definition itself.
std::pair<std::int64_t, double> brute_force(const std::vector<double>& a,
                                            const std::vector<double>& b) {
  std::int64_t greater_minus_less = 0;
  double w = 0;  // Mann–Whitney U of a: pairs a > b, plus half of the ties
  for (const double x : a) {
    for (const double y : b) {
      greater_minus_less += (x > y) - (x < y);
      w += x > y ? 1.0 : x == y ? 0.5 : 0.0;
    }
  }
  return {greater_minus_less, w};
}

TEST(Statistics, SortBasedCountsEqualBruteForceWithHeavyTies) {
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<int> coarse(0, 40);  // 41 distinct values: ties everywhere
  for (const auto& [na, nb] : {std::pair{300, 257}, std::pair{1, 50}, std::pair{64, 1}}) {
    std::vector<double> a(static_cast<std::size_t>(na));
    std::vector<double> b(static_cast<std::size_t>(nb));
    for (double& v : a) v = coarse(rng) * 2.5;
    for (double& v : b) v = coarse(rng) * 2.5 + 5;
    const auto [diff, w] = brute_force(a, b);
    const double pairs = static_cast<double>(na) * nb;
    EXPECT_DOUBLE_EQ(*cliffs_delta(a, b), static_cast<double>(diff) / pairs);
    const auto r = wilcoxon_rank_sum(a, b);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->w, w) << "rank-sum W is the Mann–Whitney U";
    EXPECT_DOUBLE_EQ(*cliffs_delta(a, b), 2 * r->w / pairs - 1);
  }
}

TEST(Statistics, ExactAtThreeHundredThousandValuesEach) {
  // a = evens, b = odds, shuffled: a_i > b_j iff i > j, so U = n (n - 1) / 2 and delta = -1 / n.
  // Exercises the sort-based path at scale and the integer counts beyond 2^32 pairs.
  constexpr std::size_t n = 300000;
  std::vector<double> a(n);
  std::vector<double> b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 2.0 * static_cast<double>(i);
    b[i] = 2.0 * static_cast<double>(i) + 1;
  }
  std::mt19937_64 rng(7);
  std::shuffle(a.begin(), a.end(), rng);
  std::shuffle(b.begin(), b.end(), rng);
  const double nd = static_cast<double>(n);
  EXPECT_EQ(*cliffs_delta(a, b), -nd / (nd * nd));
  const auto r = wilcoxon_rank_sum(a, b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->w, nd * (nd - 1) / 2);
}

TEST(Statistics, TinyPValuesKeepRelativePrecision) {
  // Shifting b moves t by a known amount; p must keep shrinking smoothly far below 1e-16, which
  // 2 (1 - cdf) could not represent, and only be reported as 0 once below DBL_MIN.
  const Samples s = read_fixture("tiny_p");
  double previous = 1;
  int far_below_epsilon = 0;  // non-zero p-values under 1e-100
  bool reached_zero = false;
  for (double shift = 0; shift <= 400; shift += 10) {
    std::vector<double> b = s.b;
    for (double& v : b) v += shift;
    const double p = welch_t_test(s.a, b)->p;
    EXPECT_TRUE(p == 0.0 || p >= kSmallestReportedP) << "no subnormal p-values: " << p;
    if (p == 0.0) {
      reached_zero = true;
    } else {
      EXPECT_FALSE(reached_zero) << "p came back from 0 at shift " << shift;
      EXPECT_LT(p, previous) << "shift " << shift;
      if (p < 1e-100) ++far_below_epsilon;
    }
    previous = p;
  }
  EXPECT_GE(far_below_epsilon, 5);
  EXPECT_TRUE(reached_zero);
}

}  // namespace
}  // namespace dsekp::analyze
