// Floods against a live edge while three legitimate devices stream: 20,000 hostile messages
// (forged INITs for a registered device, replays of its accepted INIT, INITs and DATA from
// thousands of unknown device ids, DATA under sessions that do not exist). Every one is counted
// under its reason; the edge's resident memory stays within a generous bound (VmRSS from /proc
// before and after; no speed is asserted); the flooded device can still start a session (replays
// and forgeries never spend its INIT budget); and a device that holds its secret but floods valid
// INITs is held to its budget (burst 8, then rate_limited) without touching anyone else.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "async_mqtt_client.hpp"
#include "attack_frames.hpp"
#include "hostile_bed.hpp"

namespace dsekp::hostile {
namespace {

const std::vector<std::string> kLegit = {"legit-0", "legit-1", "legit-2"};

constexpr int kForgedInits = 5000;    // bad_proof
constexpr int kInitReplays = 2000;    // superseded_init (the newest `t` again)
constexpr int kGhostInits = 8000;     // unknown_device, each a different dev_id
constexpr int kGhostData = 4000;      // unknown_device
constexpr int kNoSessionData = 1000;  // unknown_session
constexpr long kRssGrowthBoundKb = rss_growth_bound_kb(64 * 1024);

std::string ghost(int k) {
  char name[32];
  std::snprintf(name, sizeof name, "ghost-%05d", k);
  return name;
}

using HostileFlood = OnEachMqttClient;
DSEKP_ON_EACH_MQTT_CLIENT(HostileFlood);

TEST_P(HostileFlood, TwentyThousandHostileMessagesAreCountedAndMemoryStaysBounded) {
  // A refill slow enough that the budget check below is exact however long the test takes.
  Bed bed({"legit-0", "legit-1", "legit-2", "victim", "noisy"},
          with_client({"--init-refill-ms", "3600000"}));
  ASSERT_TRUE(bed.start());
  AsyncMqttClient attacker("attacker");
  ASSERT_TRUE(attacker.connect(bed.port()));
  ASSERT_TRUE(attacker.subscribe("dsekp/init/ack/victim"));
  ASSERT_TRUE(attacker.subscribe("dsekp/init/ack/noisy"));
  std::vector<std::unique_ptr<Streamer>> streamers;
  ASSERT_TRUE(start_streamers(bed, kLegit, streamers));

  HostileDevice victim(bed.material("victim"), 41);
  InitFrame accepted;
  const std::string victim_init = victim.init(unix_s(), Encoding::compact, &accepted);
  ASSERT_TRUE(handshake_over(attacker, victim, victim_init));
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim",
                            {victim.data(R"({"victim":0})", unix_ms(), Encoding::json)}, 1));

  // Build the flood first (the attacker's cost is not the edge's), interleaving the kinds.
  std::mt19937 rng(4141);
  std::vector<std::pair<std::string, std::string>> flood;
  const std::uint32_t now = unix_s();
  for (int k = 0; k < kForgedInits; ++k) {
    InitFrame f = accepted;
    f.sessctr = static_cast<std::uint16_t>(rng());
    (void)f.dev_nonce.assign(bytes_of(random_bytes(rng, 12)));
    (void)f.proof.assign(bytes_of(random_bytes(rng, 16)));
    f.t = now;
    flood.emplace_back("dsekp/init", wire(f, k % 2 == 0 ? Encoding::json : Encoding::compact));
  }
  for (int k = 0; k < kInitReplays; ++k) flood.emplace_back("dsekp/init", victim_init);
  for (int k = 0; k < kGhostInits; ++k) {
    InitFrame f = accepted;
    (void)f.dev_id.assign(ghost(k));
    flood.emplace_back("dsekp/init", wire(f, k % 2 == 0 ? Encoding::json : Encoding::compact));
  }
  DataFrame d;
  d.sessctr = 1;
  d.sendts_ms = unix_ms();
  d.has_iv = true;
  (void)d.ciphertext.assign(bytes_of(R"({"t":21.5,"h":40.0})"));
  for (int k = 0; k < kGhostData; ++k) {
    (void)d.dev_id.assign(ghost(100000 - k));
    d.seq = static_cast<std::uint32_t>(k);
    flood.emplace_back("dsekp/data", wire(d, k % 2 == 0 ? Encoding::json : Encoding::compact));
  }
  (void)d.dev_id.assign("victim");
  d.sessctr = static_cast<std::uint16_t>(victim.session().sessctr() ^ 0x8000);
  for (int k = 0; k < kNoSessionData; ++k) {
    d.seq = static_cast<std::uint32_t>(k);
    flood.emplace_back("dsekp/data", wire(d, Encoding::compact));
  }
  std::shuffle(flood.begin(), flood.end(), rng);
  ASSERT_EQ(flood.size(), 20000u);

  // Warm-up (a first slice) so that one-off allocations are in the "before" figure.
  const Metrics before_warmup = bed.metrics();
  for (std::size_t k = 0; k < 1000; ++k)
    ASSERT_TRUE(attacker.publish(flood[k].first, flood[k].second));
  ASSERT_TRUE(bed.wait_rejections(before_warmup, 1000, std::chrono::seconds(30)));
  const long rss_before = bed.rss_kb();
  ASSERT_GT(rss_before, 0);

  const Metrics before = bed.metrics();
  for (std::size_t k = 1000; k < flood.size(); ++k)
    ASSERT_TRUE(attacker.publish(flood[k].first, flood[k].second)) << k;
  ASSERT_TRUE(attacker.wait_all_acked(std::chrono::seconds(40)));
  ASSERT_TRUE(bed.wait_rejections(before, 19000, std::chrono::seconds(40)));
  const long rss_after = bed.rss_kb();
  const Metrics after = bed.metrics();
  std::printf("edge VmRSS: %ld kB before, %ld kB after 19,000 hostile messages (+%ld kB)\n",
              rss_before, rss_after, rss_after - rss_before);
  EXPECT_LT(rss_after - rss_before, kRssGrowthBoundKb);

  // Exact totals for the whole flood, warm-up included.
  EXPECT_TRUE(rejection_deltas_are(before_warmup, after,
                                   {{"bad_proof", kForgedInits},
                                    {"superseded_init", kInitReplays},
                                    {"unknown_device", kGhostInits + kGhostData},
                                    {"unknown_session", kNoSessionData}}));
  EXPECT_EQ(delta(before_warmup, after, "dsekp_handshakes_total{outcome=\"accepted\"}"), 0);
  EXPECT_EQ(delta(before_warmup, after, "dsekp_sessions_evicted_total"), 0);

  // The flooded device's budget is intact: a new session starts at once.
  ASSERT_TRUE(handshake_over(attacker, victim, victim.init(unix_s(), Encoding::json)));
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim",
                            {victim.data(R"({"victim":1})", unix_ms(), Encoding::json)}, 2));

  // A device with its secret flooding valid INITs: 8 accepted (the burst), 4 rate_limited.
  HostileDevice noisy(bed.material("noisy"), 42);
  const Metrics before_noisy = bed.metrics();
  const std::uint32_t t = unix_s();
  for (int k = 0; k < 12; ++k)
    ASSERT_TRUE(attacker.publish("dsekp/init", noisy.init(t, Encoding::compact)));
  ASSERT_TRUE(bed.wait_rejections(before_noisy, 4));
  ASSERT_TRUE(attacker.wait_for_messages("dsekp/init/ack/noisy", 8));
  const Metrics after_noisy = bed.metrics();
  EXPECT_TRUE(rejection_deltas_are(before_noisy, after_noisy, {{"rate_limited", 4}}));
  EXPECT_EQ(delta(before_noisy, after_noisy, "dsekp_handshakes_total{outcome=\"accepted\"}"), 8);

  expect_streamers_lost_nothing(bed, streamers);
  expect_edge_healthy(bed);
}

}  // namespace
}  // namespace dsekp::hostile
