// DeviceActivity: which devices count as seen and silent, that a removed device stops
// counting, and the online/offline availability it publishes (device_activity.hpp). The end-to-end
// counts on a real edge are checked by tests/packaging/prometheus_test.sh.
#include "edge/daemon/device_activity.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

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

using Published = std::vector<std::pair<std::string, std::string>>;

// A DeviceActivity with availability after 1 minute, recording what it publishes.
struct AvailabilityBed {
  explicit AvailabilityBed(std::set<std::string>* registered = nullptr)
      : activity([registered](const std::string& dev_id) {
          return registered == nullptr || registered->count(dev_id) != 0;
        }) {
    activity.publish_availability(kMinute, [this](const std::string& dev_id, std::string_view p) {
      out.emplace_back(dev_id, std::string(p));
    });
  }
  Published out;
  DeviceActivity activity;
};

TEST(DeviceActivity, ADeviceIsOnlineAtItsFirstFrameAndOfflineOnceQuietForTheTimeout) {
  AvailabilityBed bed;
  DeviceActivity& activity = bed.activity;
  const Published& out = bed.out;
  activity.seen("a", 0);
  activity.seen("a", 30'000);  // still online: nothing new
  EXPECT_EQ(out, (Published{{"a", "online"}}));
  activity.sweep(30'000 + kMinute);  // exactly the timeout: not yet
  EXPECT_EQ(out.size(), 1u);
  activity.sweep(30'001 + kMinute);
  activity.sweep(40'000 + kMinute);  // once
  EXPECT_EQ(out, (Published{{"a", "online"}, {"a", "offline"}}));
  activity.seen("a", 50'000 + kMinute);  // back
  EXPECT_EQ(out.back(), (std::pair<std::string, std::string>{"a", "online"}));
  EXPECT_EQ(out.size(), 3u);
}

TEST(DeviceActivity, AnExpectedDeviceThatNeverSendsGoesOfflineWithoutCountingAsSeen) {
  AvailabilityBed bed;
  DeviceActivity& activity = bed.activity;
  const Published& out = bed.out;
  activity.expect({"quiet", "talks"}, 0);
  activity.seen("talks", 1'000);
  activity.sweep(kMinute + 1);
  EXPECT_EQ(out, (Published{{"talks", "online"}, {"quiet", "offline"}}));
  EXPECT_EQ(activity.counts(kMinute + 1).seen, 1u) << "only the one that sent";
}

TEST(DeviceActivity, ARemovedDeviceHasItsAvailabilityCleared) {
  std::set<std::string> registered{"gone", "never-announced"};
  AvailabilityBed bed(&registered);
  DeviceActivity& activity = bed.activity;
  const Published& out = bed.out;
  activity.expect({"never-announced"}, 0);
  activity.seen("gone", 0);
  registered.clear();
  activity.sweep(2 * kMinute);
  EXPECT_EQ(out, (Published{{"gone", "online"}, {"gone", ""}}))
      << "cleared once; nothing was ever retained for the other";
  activity.sweep(3 * kMinute);
  EXPECT_EQ(out.size(), 2u);
}

TEST(DeviceActivity, WithoutAvailabilityNothingIsPublishedOrExpected) {
  DeviceActivity activity([](const std::string&) { return true; });
  activity.expect({"x"}, 0);
  activity.seen("y", 0);
  activity.sweep(10 * kMinute);
  EXPECT_EQ(activity.counts(10 * kMinute).seen, 1u);
}

}  // namespace
}  // namespace dsekp::edge
