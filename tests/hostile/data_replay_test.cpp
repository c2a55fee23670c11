// DATA replays, reordering and header bit-flips against a live edge while three legitimate
// devices stream. A "victim" device's frames pass through the attacker, which can hold, reorder,
// copy and alter them (it sits on the broker); the streaming devices' frames it can only copy.
// Expected (PROTOCOL.md 6.3): a copy of an accepted frame is `replay`, one more than W-1 below
// the highest accepted seq is `too_old` (W = 64), a changed header or tag fails authentication
// (`auth_failed`; `nonce_mismatch` when a JSON frame's seq or iv no longer match; a changed
// dev_id is `unknown_device` or `bad_dev_id`; a changed sessctr `unknown_session`), frames
// reordered within the window are all accepted once, and none of it moves the window: the genuine
// frame still gets in afterwards. Old sessions and an edge restart do not reopen the door.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "async_mqtt_client.hpp"
#include "attack_frames.hpp"
#include "hostile_bed.hpp"

namespace dsekp::hostile {
namespace {

const std::vector<std::string> kLegit = {"legit-0", "legit-1", "legit-2"};

struct Sent {
  std::string reading;
  std::string wire;
};

// The victim's next frames, sealed but not yet sent (the attacker holds them).
std::vector<Sent> seal(HostileDevice& victim, int first, int count) {
  std::vector<Sent> out;
  for (int i = first; i < first + count; ++i) {
    const std::string reading = R"({"victim":)" + std::to_string(i) + "}";
    const Encoding enc = i % 2 == 0 ? Encoding::compact : Encoding::json;
    out.push_back({reading, victim.data(reading, unix_ms(), enc)});
  }
  return out;
}

std::vector<std::string> wires(const std::vector<Sent>& frames) {
  std::vector<std::string> out;
  for (const Sent& s : frames) out.push_back(s.wire);
  return out;
}

// Publishes `payloads` on dsekp/data and checks the exact rejection deltas they cause.
void expect_rejected(Bed& bed, AsyncMqttClient& attacker, const std::vector<std::string>& payloads,
                     const std::map<std::string, double>& reasons, const std::string& label) {
  const Metrics before = bed.metrics();
  for (const std::string& p : payloads) ASSERT_TRUE(attacker.publish("dsekp/data", p)) << label;
  double n = 0;
  for (const auto& [reason, count] : reasons) n += count;
  ASSERT_TRUE(bed.wait_rejections(before, n)) << label;
  const Metrics after = bed.metrics();
  EXPECT_TRUE(rejection_deltas_are(before, after, reasons)) << label;
  EXPECT_EQ(delta(before, after, "dsekp_frames_total{mode=\"dsekp\",outcome=\"rejected\"}"), n)
      << label;
}

// The streamers' first frames, captured by the attacker, once each streamer is far enough ahead
// that they are below its window.
std::vector<std::string> old_streamer_frames(Bed& bed, AsyncMqttClient& attacker,
                                             std::size_t per_streamer) {
  std::map<std::string, std::vector<std::string>> by_dev;
  for (const auto& m : attacker.messages("dsekp/data")) {
    DataFrame f;
    if (decode_data(bytes_of(m.payload), Direction::uplink, f) != Error::ok) continue;
    const std::string id(f.dev_id.str());
    if (std::find(kLegit.begin(), kLegit.end(), id) != kLegit.end() &&
        by_dev[id].size() < per_streamer && f.seq < per_streamer)
      by_dev[id].push_back(m.payload);
  }
  for (const std::string& id : kLegit) {
    EXPECT_TRUE(edge::testing::wait_until([&] { return bed.telemetry(id).size() >= 100; },
                                          std::chrono::seconds(20)))
        << id;
  }
  std::vector<std::string> out;
  for (auto& [id, frames] : by_dev) out.insert(out.end(), frames.begin(), frames.end());
  return out;
}

TEST(HostileData, ReplaysReorderingAndBitFlipsAreRefusedByName) {
  Bed bed({"legit-0", "legit-1", "legit-2", "victim"});
  ASSERT_TRUE(bed.start());
  AsyncMqttClient attacker("attacker");
  ASSERT_TRUE(attacker.connect(bed.port()));
  ASSERT_TRUE(attacker.subscribe("dsekp/data"));
  ASSERT_TRUE(attacker.subscribe("dsekp/init/ack/victim"));
  std::vector<std::unique_ptr<Streamer>> streamers;
  ASSERT_TRUE(start_streamers(bed, kLegit, streamers));
  const Metrics start = bed.metrics();

  HostileDevice victim(bed.material("victim"), 21);
  ASSERT_TRUE(handshake_over(attacker, victim, victim.init(unix_s(), Encoding::json)));
  std::vector<std::string> stored;  // the victim's readings the edge must end up with
  const std::vector<Sent> first = seal(victim, 0, 10);
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim", wires(first), 10));
  for (const Sent& s : first) stored.push_back(s.reading);

  // Replays within the same session.
  expect_rejected(bed, attacker, wires(first), {{"replay", 10}}, "same-session replay");
  // The streamers' first frames, long below their windows.
  const std::vector<std::string> old = old_streamer_frames(bed, attacker, 3);
  ASSERT_EQ(old.size(), 9u);
  expect_rejected(bed, attacker, old, {{"too_old", 9}}, "streamers' old frames");

  // Bit flips of a frame not yet sent (seq 10 compact, seq 11 JSON).
  const std::vector<Sent> next = seal(victim, 10, 2);
  const std::string& c = next[0].wire;  // 03 L "victim" sessctr(2) seq(4) sendts(8) ct tag(16)
  const std::string& j = next[1].wire;
  const std::string seq11 = json_member(j, "seq");
  expect_rejected(bed, attacker,
                  {flip(c, c.size() - 1, 0),  // tag
                   flip(c, 21, 0),            // sendts_ms
                   flip(c, 13, 1),            // seq
                   flip(c, 25, 4),            // ciphertext
                   replace_first(j, json_member(j, "tag"), "\"tag\":\"AAAAAAAAAAAAAAAAAAAAAA==\""),
                   replace_first(j, json_member(j, "sendts_ms"), "\"sendts_ms\":1")},
                  {{"auth_failed", 6}}, "tag, sendts_ms, seq, ciphertext flips");
  expect_rejected(bed, attacker,
                  {replace_first(j, seq11, "\"seq\":12"),
                   replace_first(j, json_member(j, "iv"), "\"iv\":\"AAAAAAAAAAAAAAAA\"")},
                  {{"nonce_mismatch", 2}}, "JSON seq / iv flips");
  expect_rejected(bed, attacker,
                  {flip(c, 2, 5),                                  // "Victim"
                   replace_first(j, "\"victim\"", "\"victin\"")},  // JSON dev_id
                  {{"unknown_device", 2}}, "dev_id flips to unregistered ids");
  expect_rejected(bed, attacker, {flip(c, 3, 6)}, {{"bad_dev_id", 1}}, "dev_id flip to ')'");
  expect_rejected(
      bed, attacker,
      {flip(c, 8, 0),
       replace_first(j, json_member(j, "sessctr_id"),
                     "\"sessctr_id\":" + std::to_string((victim.session().sessctr() + 1) % 65536))},
      {{"unknown_session", 2}}, "wrong sessctr");
  // The genuine frames still get in: no forgery moved the window or burnt a seq.
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim", wires(next), 12));
  for (const Sent& s : next) stored.push_back(s.reading);

  // Reordering within the window: 20 frames newest first, all accepted exactly once.
  std::vector<Sent> window = seal(victim, 12, 20);
  std::reverse(window.begin(), window.end());
  const Metrics before_reorder = bed.metrics();
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim", wires(window), 32));
  for (const Sent& s : window) stored.push_back(s.reading);
  EXPECT_TRUE(rejection_deltas_are(before_reorder, bed.metrics(), {}));
  expect_rejected(bed, attacker, {window[3].wire, window[17].wire}, {{"replay", 2}},
                  "replay after reordering");

  // Reordering beyond the window: seq 32..131 held, 131 sent first. The 36 frames more than 63
  // below it (seq 32..67) are too_old; seq 68..131 (64 frames) are accepted.
  const std::vector<Sent> far = seal(victim, 32, 100);
  std::vector<std::string> order = {far.back().wire};
  for (std::size_t k = 0; k + 1 < far.size(); ++k) order.push_back(far[k].wire);
  const Metrics before_far = bed.metrics();
  for (const std::string& w : order) ASSERT_TRUE(attacker.publish("dsekp/data", w));
  ASSERT_TRUE(bed.wait_rejections(before_far, 36));
  for (std::size_t k = 36; k < far.size(); ++k) stored.push_back(far[k].reading);
  ASSERT_TRUE(edge::testing::wait_until(
      [&] { return bed.telemetry("victim").size() >= stored.size(); }, std::chrono::seconds(20)));
  EXPECT_TRUE(rejection_deltas_are(before_far, bed.metrics(), {{"too_old", 36}}));

  std::map<std::string, int> want;
  for (const std::string& r : stored) ++want[r];
  EXPECT_EQ(bed.telemetry("victim"), want);
  EXPECT_EQ(delta(start, bed.metrics(), "dsekp_sessions_evicted_total"), 0);
  expect_streamers_lost_nothing(bed, streamers);
  expect_edge_healthy(bed);
}

TEST(HostileData, OldSessionsAndAnEdgeRestartDoNotReopenReplays) {
  Bed bed({"legit-0", "legit-1", "legit-2", "victim"});
  ASSERT_TRUE(bed.start());
  AsyncMqttClient attacker("attacker");
  ASSERT_TRUE(attacker.connect(bed.port()));
  ASSERT_TRUE(attacker.subscribe("dsekp/data"));
  ASSERT_TRUE(attacker.subscribe("dsekp/init/ack/victim"));
  std::vector<std::unique_ptr<Streamer>> streamers;
  ASSERT_TRUE(start_streamers(bed, kLegit, streamers));
  const Metrics start = bed.metrics();

  HostileDevice victim(bed.material("victim"), 22);
  std::uint32_t t = unix_s();
  ASSERT_TRUE(handshake_over(attacker, victim, victim.init(t, Encoding::json)));
  const std::vector<Sent> s1 = seal(victim, 0, 10);
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim", wires(s1), 10));
  // A second session: the first stays established (5 are kept), so its frames are replays.
  ASSERT_TRUE(handshake_over(attacker, victim, victim.init(t, Encoding::compact)));
  const std::vector<Sent> s2 = seal(victim, 10, 5);
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim", wires(s2), 15));
  expect_rejected(bed, attacker, wires(s1), {{"replay", 10}}, "older session's frames");

  // Four more sessions: the sixth evicts the first (oldest accepted), whose frames now have no
  // session to be tried under.
  std::size_t stored = 15;
  for (int k = 0; k < 4; ++k) {
    ASSERT_TRUE(handshake_over(attacker, victim, victim.init(t, Encoding::json)));
    ASSERT_TRUE(send_and_wait(bed, attacker, "victim", wires(seal(victim, 100 + k, 1)), ++stored));
  }
  EXPECT_EQ(delta(start, bed.metrics(), "dsekp_sessions_evicted_total"), 1);
  expect_rejected(bed, attacker, wires(s1), {{"unknown_session", 10}}, "evicted session's frames");

  // Edge restart: sessions and windows come back from the state database.
  const std::vector<std::string> old = old_streamer_frames(bed, attacker, 3);
  ASSERT_EQ(old.size(), 9u);
  ASSERT_TRUE(bed.restart());
  expect_rejected(bed, attacker, wires(s2), {{"replay", 5}}, "replay after restart");
  expect_rejected(bed, attacker, wires(s1), {{"unknown_session", 10}}, "evicted, after restart");
  expect_rejected(bed, attacker, old, {{"too_old", 9}}, "streamers' old frames after restart");
  // The victim's current session works on without a new handshake.
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim", wires(seal(victim, 200, 3)), stored + 3));

  EXPECT_EQ(bed.telemetry("victim").size(), stored + 3);
  expect_streamers_lost_nothing(bed, streamers);
  expect_edge_healthy(bed);
}

}  // namespace
}  // namespace dsekp::hostile
