// INIT replays against a live edge while three legitimate devices stream, with a clock (the
// default max_skew 300 s) and clockless (max_skew 0, `t` a counter). A captured INIT re-sent
// while its session is pending is a retransmission (the edge answers with the same ACK, at most
// twice a second, and changes nothing); re-sent after the session is confirmed it is refused as
// superseded_init (a device's `t` always grows, so no later INIT may have the newest one's); an
// INIT the attacker held back while the device moved on is superseded_init too; a bit-flipped
// INIT is bad_proof. Captured INITs of the streaming devices are replayed too: they must not
// disturb those devices' sessions.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "async_mqtt_client.hpp"
#include "attack_frames.hpp"
#include "hostile_bed.hpp"

namespace dsekp::hostile {
namespace {

const std::vector<std::string> kLegit = {"legit-0", "legit-1", "legit-2"};
const std::string kAckTopic = "dsekp/init/ack/victim";
const std::string kAccepted = "dsekp_handshakes_total{outcome=\"accepted\"}";
const std::string kRetransmitted = "dsekp_handshakes_total{outcome=\"retransmitted\"}";

// Publishes `payloads` and checks the rejection deltas they cause, exactly.
void expect_rejected(Bed& bed, AsyncMqttClient& attacker, const std::vector<std::string>& payloads,
                     const std::string& reason, const std::string& label) {
  const Metrics before = bed.metrics();
  for (const std::string& p : payloads) ASSERT_TRUE(attacker.publish("dsekp/init", p)) << label;
  ASSERT_TRUE(bed.wait_rejections(before, static_cast<double>(payloads.size()))) << label;
  const Metrics after = bed.metrics();
  EXPECT_TRUE(rejection_deltas_are(before, after, {{reason, static_cast<double>(payloads.size())}}))
      << label;
  EXPECT_EQ(delta(before, after, kAccepted), 0) << label;
}

// A captured INIT re-sent while pending: the same ACK again, counted as a retransmission.
void expect_retransmission(Bed& bed, AsyncMqttClient& attacker, const std::string& init,
                           const std::string& first_ack) {
  // The edge answers one INIT's retransmissions at most every 500 ms (a device's own resends
  // come no sooner); this one comes after that.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const Metrics before = bed.metrics();
  const std::size_t acks = attacker.messages(kAckTopic).size();
  ASSERT_TRUE(attacker.publish("dsekp/init", init));
  ASSERT_TRUE(attacker.wait_for_messages(kAckTopic, acks + 1));
  EXPECT_EQ(attacker.messages(kAckTopic)[acks].payload, first_ack);
  ASSERT_TRUE(bed.wait_metric(
      kRetransmitted, (before.count(kRetransmitted) != 0u ? before.at(kRetransmitted) : 0) + 1));
  const Metrics after = bed.metrics();
  EXPECT_TRUE(rejection_deltas_are(before, after, {}));
  EXPECT_EQ(delta(before, after, kAccepted), 0);
}

// The bit-flipped copies of a compact INIT whose flips keep it decodable: sessctr, t, dev_nonce
// and proof (layout: type, L, dev_id, sessctr(2), t(4), dev_nonce(12), proof(16)).
std::vector<std::string> flipped(const std::string& compact, std::size_t id_len) {
  const std::size_t sessctr = 2 + id_len;
  return {flip(compact, sessctr + 1, 0), flip(compact, sessctr + 5, 0),
          flip(compact, sessctr + 6, 3), flip(compact, compact.size() - 1, 7)};
}

TEST(HostileInitReplay, WithAClockReplaysAreRetransmissionsThenRefused) {
  Bed bed({"legit-0", "legit-1", "legit-2", "victim"});
  ASSERT_TRUE(bed.start());
  // The attacker listens from the start: it captures the streaming devices' INITs too.
  AsyncMqttClient attacker("attacker");
  ASSERT_TRUE(attacker.connect(bed.port()));
  ASSERT_TRUE(attacker.subscribe("dsekp/init"));
  ASSERT_TRUE(attacker.subscribe(kAckTopic));
  std::vector<std::unique_ptr<Streamer>> streamers;
  ASSERT_TRUE(start_streamers(bed, kLegit, streamers));
  ASSERT_TRUE(attacker.wait_for_messages("dsekp/init", kLegit.size()));
  std::vector<std::string> legit_inits;
  for (const auto& m : attacker.messages("dsekp/init")) legit_inits.push_back(m.payload);

  HostileDevice victim(bed.material("victim"), 11);
  const std::uint32_t t0 = unix_s();
  const std::string held_back = victim.init(t0 - 2, Encoding::json);  // the attacker keeps it
  const std::string init = victim.init(t0, Encoding::compact);        // the device moves on
  std::string ack;
  const Metrics start = bed.metrics();
  ASSERT_TRUE(handshake_over(attacker, victim, init, &ack));
  EXPECT_EQ(delta(start, bed.metrics(), kAccepted), 1);

  // Fresh replay while the session is pending: a retransmission, not a new session.
  expect_retransmission(bed, attacker, init, ack);
  // The held-back older INIT cannot displace the pending session.
  expect_rejected(bed, attacker, {held_back}, "superseded_init", "held back INIT");
  // Bit flips in sessctr, t, dev_nonce, proof.
  expect_rejected(bed, attacker, flipped(init, 6), "bad_proof", "flipped INIT");

  // The device confirms its session with DATA frames: the pending session was never replaced.
  std::vector<std::string> frames;
  for (int i = 0; i < 3; ++i)
    frames.push_back(victim.data(R"({"v":)" + std::to_string(i) + "}", unix_ms(), Encoding::json));
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim", frames, 3));

  // Replays after the session was accepted: the newest `t` again, never a new session.
  expect_rejected(bed, attacker, {init, init, init}, "superseded_init", "replay after accept");
  expect_rejected(bed, attacker, legit_inits, "superseded_init", "streamers' INITs replayed");

  // The device starts a newer session; now the old INIT is older than the newest accepted.
  ASSERT_TRUE(handshake_over(attacker, victim, victim.init(t0 + 1, Encoding::json)));
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim",
                            {victim.data(R"({"v":3})", unix_ms(), Encoding::compact)}, 4));
  expect_rejected(bed, attacker, {init, held_back}, "superseded_init", "replay of older INITs");

  const Metrics end = bed.metrics();
  EXPECT_EQ(delta(start, end, kAccepted), 2);
  EXPECT_EQ(delta(start, end, "dsekp_sessions_evicted_total"), 0);
  EXPECT_EQ(attacker.messages(kAckTopic).size(), 3u);  // two handshakes + one retransmission
  expect_streamers_lost_nothing(bed, streamers);
  expect_edge_healthy(bed);
}

TEST(HostileInitReplay, ClocklessCountersMustGrowSoEveryReplayIsSuperseded) {
  Bed bed({"legit-0", "legit-1", "legit-2", "victim"}, {"--max-skew", "0"});
  ASSERT_TRUE(bed.start());
  AsyncMqttClient attacker("attacker");
  ASSERT_TRUE(attacker.connect(bed.port()));
  ASSERT_TRUE(attacker.subscribe("dsekp/init"));
  ASSERT_TRUE(attacker.subscribe(kAckTopic));
  std::vector<std::unique_ptr<Streamer>> streamers;
  ASSERT_TRUE(start_streamers(bed, kLegit, streamers, /*t=*/40));  // their persisted counters
  ASSERT_TRUE(attacker.wait_for_messages("dsekp/init", kLegit.size()));
  std::vector<std::string> legit_inits;
  for (const auto& m : attacker.messages("dsekp/init")) legit_inits.push_back(m.payload);

  DeviceConfig clockless;
  clockless.clockless = true;
  HostileDevice victim(bed.material("victim"), 12, clockless);
  const std::string held_back = victim.init(5, Encoding::compact);
  const std::string init = victim.init(6, Encoding::json);
  std::string ack;
  const Metrics start = bed.metrics();
  ASSERT_TRUE(handshake_over(attacker, victim, init, &ack));

  expect_retransmission(bed, attacker, init, ack);
  expect_rejected(bed, attacker, {held_back}, "superseded_init", "held back INIT (counter 5)");
  const std::string init_compact = wire(victim.session().current_init(), Encoding::compact);
  expect_rejected(bed, attacker, flipped(init_compact, 6), "bad_proof", "flipped INIT");
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim",
                            {victim.data(R"({"v":0})", unix_ms(), Encoding::json)}, 1));

  // After acceptance an equal counter is not enough: superseded, whatever the dev_nonce cache.
  expect_rejected(bed, attacker, {init, init_compact}, "superseded_init", "replay after accept");
  expect_rejected(bed, attacker, legit_inits, "superseded_init", "streamers' INITs replayed");
  ASSERT_TRUE(handshake_over(attacker, victim, victim.init(7, Encoding::compact)));
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim",
                            {victim.data(R"({"v":1})", unix_ms(), Encoding::compact)}, 2));
  expect_rejected(bed, attacker, {init, held_back}, "superseded_init", "replay of older INITs");

  const Metrics end = bed.metrics();
  EXPECT_EQ(delta(start, end, kAccepted), 2);
  EXPECT_EQ(delta(start, end, "dsekp_sessions_evicted_total"), 0);
  expect_streamers_lost_nothing(bed, streamers);
  expect_edge_healthy(bed);
}

}  // namespace
}  // namespace dsekp::hostile
