// The DHT11-like sensor model: bounds, resolution, step size, determinism by seed, reading text.
#include "device/sensor_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace dsekp::device {
namespace {

bool is_whole(double v) {
  return std::fabs(v - std::round(v)) < 1e-9;
}

TEST(SensorModel, StaysInsideTheDht11RangesAtItsResolution) {
  SensorModel sensor(dht11(), 42);
  Reading previous = sensor.next();
  EXPECT_GE(previous.temperature_c, 18);  // the start range
  EXPECT_LE(previous.temperature_c, 30);
  EXPECT_GE(previous.humidity_pct, 35);
  EXPECT_LE(previous.humidity_pct, 65);
  std::set<double> temperatures;
  for (int i = 0; i < 200'000; ++i) {
    const Reading r = sensor.next();
    ASSERT_GE(r.temperature_c, 0);
    ASSERT_LE(r.temperature_c, 50);
    ASSERT_GE(r.humidity_pct, 20);
    ASSERT_LE(r.humidity_pct, 90);
    ASSERT_TRUE(is_whole(r.temperature_c)) << r.temperature_c;
    ASSERT_TRUE(is_whole(r.humidity_pct)) << r.humidity_pct;
    // A walk: at most one resolution step per reading.
    ASSERT_LE(std::fabs(r.temperature_c - previous.temperature_c), 1.0 + 1e-9);
    ASSERT_LE(std::fabs(r.humidity_pct - previous.humidity_pct), 1.0 + 1e-9);
    temperatures.insert(r.temperature_c);
    previous = r;
  }
  // 200,000 steps of a reflected walk reach far: it really moves, and reaches both bounds.
  EXPECT_GT(temperatures.size(), 20u);
  EXPECT_EQ(*temperatures.begin(), 0);
  EXPECT_EQ(*temperatures.rbegin(), 50);
}

TEST(SensorModel, FinerResolutionIsHonoured) {
  SensorSpec dht22 = dht11();
  dht22.temperature_c = {-40, 80, 0.1, 20, 25};
  SensorModel sensor(dht22, 7);
  for (int i = 0; i < 10'000; ++i) {
    const Reading r = sensor.next();
    ASSERT_TRUE(is_whole(r.temperature_c * 10)) << r.temperature_c;
    ASSERT_GE(r.temperature_c, -40 - 1e-9);
    ASSERT_LE(r.temperature_c, 80 + 1e-9);
  }
}

std::vector<std::string> readings(std::uint64_t seed, int n) {
  SensorModel sensor(dht11(), seed);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(SensorModel::format(sensor.next()));
  return out;
}

TEST(SensorModel, SameSeedSameReadingsOtherSeedOtherReadings) {
  EXPECT_EQ(readings(1, 500), readings(1, 500));
  EXPECT_NE(readings(1, 500), readings(2, 500));
  // Per-device streams of one fleet seed differ from each other.
  EXPECT_NE(SimRandom::derive(1, 0, 1).next(), SimRandom::derive(1, 1, 1).next());
  EXPECT_NE(SimRandom::derive(1, 0, 1).next(), SimRandom::derive(1, 0, 2).next());
}

TEST(SensorModel, ReadingTextIsThePapers) {
  EXPECT_EQ(SensorModel::format(Reading{24, 51}), R"({"t":24.0,"h":51.0})");
  EXPECT_EQ(SensorModel::format(Reading{0, 90}), R"({"t":0.0,"h":90.0})");
  EXPECT_EQ(SensorModel::format(Reading{-4.5, 20}), R"({"t":-4.5,"h":20.0})");
}

TEST(SimRandom, BelowAndUniformStayInRange) {
  SimRandom r(3);
  for (int i = 0; i < 100'000; ++i) {
    ASSERT_LT(r.below(7), 7u);
    const double u = r.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace dsekp::device
