// Messages that are not frames at all, against a live edge while three legitimate devices stream:
// a quarter-gigabyte publish from an anonymous client while the edge runs under an address-space
// limit (prlimit on its pid) on a broker that has no packet limit of its own, a message just over
// the frame limit, and a genuine DATA frame published as retained, which the broker sends again
// to the edge on every (re)subscription. The edge must stay up (same process, one connection),
// refuse each by name, keep its memory, and lose none of the devices' frames.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "async_mqtt_client.hpp"
#include "edge/daemon/edge_daemon.hpp"
#include "hostile_bed.hpp"

namespace dsekp::hostile {
namespace {

const std::vector<std::string> kLegit = {"legit-0", "legit-1", "legit-2"};

long status_kb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// On one MQTT client (--mqtt-client `client`); see the test below.
void a_quarter_gigabyte_publish_under_a_memory_limit(const std::string& client) {
  Bed bed({"legit-0", "legit-1", "legit-2"}, {"--mqtt-client", client});
  ASSERT_TRUE(bed.start());
  std::vector<std::unique_ptr<Streamer>> streamers;
  ASSERT_TRUE(start_streamers(bed, kLegit, streamers));
  const pid_t pid = bed.edge_pid();

  // The limit leaves the edge 192 MiB of address space beyond what it has mapped now: enough
  // for anything it does, far too little for a 256 MiB buffer.
  const long vm_kb = status_kb(pid, "VmSize");
  ASSERT_GT(vm_kb, 0);
  const long long limit = (static_cast<long long>(vm_kb) + 192 * 1024) * 1024;
  const std::string prlimit = "prlimit --pid " + std::to_string(pid) +
                              " --as=" + std::to_string(limit) + ":" + std::to_string(limit);
  ASSERT_EQ(std::system(prlimit.c_str()), 0) << prlimit;
  const long rss_before = bed.rss_kb();

  AsyncMqttClient attacker("attacker");
  ASSERT_TRUE(attacker.connect(bed.port()));
  const Metrics before = bed.metrics();
  // The largest payload MQTT can carry (libmosquitto refuses 256 MiB itself).
  const std::string huge((256u << 20) - 1024, '{');
  ASSERT_TRUE(attacker.publish("dsekp/data", huge));
  ASSERT_TRUE(attacker.publish("dsekp/init", huge));
  ASSERT_TRUE(attacker.wait_all_acked(std::chrono::seconds(60)));
  // Over the frame limit, under the packet limit: it reaches the edge and is refused unread.
  ASSERT_TRUE(attacker.publish("dsekp/data", std::string(4000, '{')));
  ASSERT_TRUE(attacker.wait_all_acked());
  ASSERT_TRUE(bed.wait_metric(rejection("frame_too_large"), 1));

  // The devices go on streaming through all of it.
  std::vector<std::size_t> sent_then;
  for (auto& s : streamers) sent_then.push_back(s->sent_count());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  expect_streamers_lost_nothing(bed, streamers);
  for (std::size_t i = 0; i < streamers.size(); ++i)
    EXPECT_GT(streamers[i]->sent_count(), sent_then[i] + 20) << streamers[i]->dev_id();

  const Metrics after = bed.metrics();
  EXPECT_TRUE(rejection_deltas_are(before, after, {{"frame_too_large", 1}}));
  EXPECT_EQ(bed.edge_pid(), pid);
  expect_edge_healthy(bed);
  const std::string log = bed.edge_stderr();
  EXPECT_EQ(count_of(log, "connected to"), 1u) << "the edge lost its connection:\n" << log;
  EXPECT_EQ(log.find("FAIL-STOP"), std::string::npos) << log;
  const long rss_after = bed.rss_kb();
  std::printf("edge VmRSS: %ld kB before, %ld kB after two 256 MiB publishes\n", rss_before,
              rss_after);
  EXPECT_LT(rss_after - rss_before, rss_growth_bound_kb(32 * 1024));
}

// Both clients in turn, not as two tests: two of these at once (a gigabyte through the broker)
// starve the streaming devices of the machine rather than test the edge (CMakeLists.txt runs it
// alone for the same reason).
TEST(HostileOversize, AQuarterGigabytePublishUnderAMemoryLimitNeitherStopsNorStallsTheEdge) {
  for (const std::string_view client : ::dsekp::edge::daemon::kMqttClients) {
    SCOPED_TRACE(client);
    a_quarter_gigabyte_publish_under_a_memory_limit(std::string(client));
  }
}

using HostileRetained = OnEachMqttClient;
DSEKP_ON_EACH_MQTT_CLIENT(HostileRetained);

TEST_P(HostileRetained, ARetainedFrameCountsOnceAndItsStoredCopyIsRefusedByName) {
  Bed bed({"victim"}, with_client());
  ASSERT_TRUE(bed.start());
  AsyncMqttClient link("victim-link");
  ASSERT_TRUE(link.connect(bed.port()));
  ASSERT_TRUE(link.subscribe("dsekp/init/ack/victim"));
  HostileDevice victim(bed.material("victim"), 51);
  ASSERT_TRUE(handshake_over(link, victim, victim.init(unix_s(), Encoding::compact)));

  // Published live it reaches the edge's subscription without the retain flag: accepted once.
  const std::string frame = victim.data(R"({"kept":1})", unix_ms(), Encoding::json);
  ASSERT_TRUE(link.publish("dsekp/data", frame, /*retain=*/true));
  ASSERT_TRUE(link.wait_all_acked());
  ASSERT_TRUE(bed.wait_metric("dsekp_frames_total{mode=\"dsekp\",outcome=\"accepted\"}", 1));

  // Every resubscription gets the broker's stored copy, flagged retained: refused by that name.
  for (int restart = 1; restart <= 2; ++restart) {
    ASSERT_TRUE(bed.restart());  // a new process: its counters start at 0
    ASSERT_TRUE(bed.wait_metric(rejection("retained_message"), 1));
    const Metrics after = bed.metrics();
    EXPECT_TRUE(rejection_deltas_are(Metrics{}, after, {{"retained_message", 1}}))
        << "restart " << restart;
  }
  EXPECT_EQ(bed.telemetry("victim"), (std::map<std::string, int>{{R"({"kept":1})", 1}}));
  expect_edge_healthy(bed);
}

}  // namespace
}  // namespace dsekp::hostile
