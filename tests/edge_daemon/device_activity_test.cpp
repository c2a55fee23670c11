// DeviceActivity: which devices count as seen and silent, and that a removed device stops
// counting (device_activity.hpp). The end-to-end counts on a real edge are checked by
// tests/packaging/prometheus_test.sh.
#include "edge/daemon/device_activity.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace dsekp::edge {
namespace {

constexpr std::uint64_t kMinute = 60'000;

TEST(DeviceActivity, CountsEachSilenceThresholdOnce) {
  DeviceActivity activity([](const std::string&) { return true; });
  const std::uint64_t t0 = 1'800'000'000'000;
  activity.seen("fresh", t0 + 59 * kMinute);
  activity.seen("ten-minutes", t0 + 50 * kMinute);
  activity.seen("two-hours", t0 - 60 * kMinute);
  activity.seen("two-days", t0 - 47 * 60 * kMinute);
  activity.seen("two-days", t0 - 47 * 60 * kMinute);  // seen twice: still one device
  const auto c = activity.counts(t0 + 60 * kMinute);
  EXPECT_EQ(c.seen, 4u);
  EXPECT_EQ(c.silent[0], 3u) << "over 5m";
  EXPECT_EQ(c.silent[1], 2u) << "over 1h";
  EXPECT_EQ(c.silent[2], 1u) << "over 24h";
  activity.seen("two-days", t0 + 60 * kMinute);  // it came back
  EXPECT_EQ(activity.counts(t0 + 60 * kMinute).silent[2], 0u);
}

TEST(DeviceActivity, ARemovedDeviceIsForgottenAndNotCountedSilent) {
  std::set<std::string> registered{"kept", "removed"};
  std::size_t lookups = 0;
  DeviceActivity activity([&](const std::string& dev_id) {
    ++lookups;
    return registered.count(dev_id) != 0;
  });
  activity.seen("kept", 0);
  activity.seen("removed", 0);
  activity.seen("active", 10 * kMinute);
  registered.erase("removed");
  const auto c = activity.counts(10 * kMinute);
  EXPECT_EQ(c.seen, 2u);
  EXPECT_EQ(c.silent[0], 1u);
  EXPECT_EQ(lookups, 2u) << "only silent devices are looked up";
  registered.insert("removed");  // re-added: counts again only once it sends
  EXPECT_EQ(activity.counts(10 * kMinute).seen, 2u);
}

}  // namespace
}  // namespace dsekp::edge
