// Malformed input against a live edge while three legitimate devices stream: broken and truncated
// JSON and compact frames, wrong JSON types, payloads over the frame cap and over half a
// megabyte, bad base64, wrong field lengths, unknown devices, forged INIT proofs, stale INITs.
// Each message must be rejected with the reason PROTOCOL.md section 7 names, one count in
// dsekp_rejections_total{reason} per message, checked one by one and then in bulk.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "async_mqtt_client.hpp"
#include "attack_frames.hpp"
#include "hostile_bed.hpp"

namespace dsekp::hostile {
namespace {

struct Attack {
  std::string label;
  std::string topic;
  std::string payload;
  std::string reason;  // the expected dsekp_rejections_total label
};

std::vector<Attack> attacks(const edge::DeviceMaterial& victim) {
  // Genuine-looking frames of a registered device that has no session: the attacker's templates.
  // (Their proofs and tags are right, but the edge never sees them unchanged.)
  HostileDevice templ(victim, 4242);
  const std::uint32_t now = unix_s();
  const std::string init_json = templ.init(now, Encoding::json);
  const std::string init_compact = wire(templ.session().current_init(), Encoding::compact);
  const std::string proof = json_member(init_json, "proof");
  const std::string nonce = json_member(init_json, "dev_nonce");
  const std::string sessctr = json_member(init_json, "sessctr");
  // A DATA frame under keys the edge never derived (the template took no ACK): seal needs a
  // session, so build the frame fields from a fabricated DataFrame instead.
  DataFrame fake;
  (void)fake.dev_id.assign("victim");
  fake.sessctr = 77;
  fake.seq = 5;
  fake.sendts_ms = unix_ms();
  fake.has_iv = true;
  (void)fake.ciphertext.assign(bytes_of("0123456789abcdef"));
  const std::string data_json = wire(fake, Encoding::json);
  const std::string data_compact = wire(fake, Encoding::compact);
  // One byte over the ciphertext cap, spliced in as text/bytes (the encoder refuses to write it).
  const std::string big_json = replace_first(
      data_json, json_member(data_json, "ciphertext"),
      "\"ciphertext\":\"" + std::string(1368, 'A') + "\"");  // 1368 base64 chars = 1026 bytes
  std::string big_compact = data_compact.substr(0, data_compact.size() - 16) +
                            std::string(1025 - 16, 'x') +
                            data_compact.substr(data_compact.size() - 16);
  std::mt19937 rng(6);
  const std::string d = "dsekp/data";
  const std::string i = "dsekp/init";
  const std::string p = "psk/data";
  return {
      {"empty INIT", i, "", "frame_empty"},
      {"lone brace", i, "{", "json_syntax"},
      {"truncated JSON INIT", i, init_json.substr(0, init_json.size() / 2), "json_syntax"},
      {"array", i, "[1,2]", "unknown_frame_type"},
      {"empty object", i, "{}", "json_missing_field"},
      {"v as a string", i, replace_first(init_json, "\"v\":1", "\"v\":\"1\""), "json_wrong_type"},
      {"sessctr as an array", i,
       replace_first(init_json, sessctr, "\"sessctr\":[" + sessctr.substr(10) + "]"),
       "json_wrong_type"},
      {"v 2", i, replace_first(init_json, "\"v\":1", "\"v\":2"), "unsupported_version"},
      {"sessctr 65536", i, replace_first(init_json, sessctr, "\"sessctr\":65536"), "bad_integer"},
      {"leading zero", i, replace_first(init_json, sessctr, "\"sessctr\":0" + sessctr.substr(10)),
       "bad_integer"},
      {"unknown member", i, replace_first(init_json, "}", ",\"x\":1}"), "json_unknown_field"},
      {"repeated member", i, replace_first(init_json, "{", "{\"v\":1,"), "json_duplicate_field"},
      {"nonce not base64", i, replace_first(init_json, nonce, "\"dev_nonce\":\"!!!!!!!!!!!!!!!!\""),
       "bad_base64"},
      {"proof unpadded", i, replace_first(init_json, "==\"", "\""), "bad_base64"},
      {"nonce of 11 bytes", i,
       replace_first(init_json, nonce, "\"dev_nonce\":\"AAAAAAAAAAAAAAA=\""), "bad_field_length"},
      {"dev_id with a space", i, replace_first(init_json, "\"victim\"", "\"vic tim\""),
       "bad_dev_id"},
      {"frame cap + 1", i, std::string(kMaxFrameSize + 1, '{'), "frame_too_large"},
      // Over the frame limit but under the edge's MQTT packet limit (8 KiB), so it reaches the
      // edge; anything larger the broker drops before it does (oversize_test.cpp).
      {"6 KB", i, random_bytes(rng, 6 * 1024), "frame_too_large"},
      {"compact INIT truncated", i, init_compact.substr(0, init_compact.size() - 1), "truncated"},
      {"compact INIT + 1 byte", i, init_compact + "x", "trailing_bytes"},
      {"DATA type byte on INIT", i, data_compact, "unknown_frame_type"},
      {"compact dev_id length 0", i, std::string("\x01\x00", 2) + init_compact.substr(8),
       "bad_dev_id"},
      {"unknown device", i, replace_first(init_json, "\"victim\"", "\"ghost-1\""),
       "unknown_device"},
      {"forged proof JSON", i,
       replace_first(init_json, proof, "\"proof\":\"AAAAAAAAAAAAAAAAAAAAAA==\""), "bad_proof"},
      {"forged proof compact", i, flip(init_compact, init_compact.size() - 1, 0), "bad_proof"},
      {"stale t (10 min ago)", i,
       replace_first(init_json, json_member(init_json, "t"), "\"t\":" + std::to_string(now - 600)),
       "stale_timestamp"},
      {"DATA lone brace", d, "{", "json_syntax"},
      {"DATA truncated JSON", d, data_json.substr(0, data_json.size() - 5), "json_syntax"},
      {"DATA seq as a string", d, replace_first(data_json, "\"seq\":5", "\"seq\":\"5\""),
       "json_wrong_type"},
      {"DATA ciphertext 1026 bytes", d, big_json, "payload_too_large"},
      {"compact DATA ciphertext 1025 bytes", d, big_compact, "payload_too_large"},
      {"DATA tag not base64", d,
       replace_first(data_json, json_member(data_json, "tag"), "\"tag\":\"*\""), "bad_base64"},
      {"DATA iv of 8 bytes", d,
       replace_first(data_json, json_member(data_json, "iv"), "\"iv\":\"AAAAAAAAAAA=\""),
       "bad_field_length"},
      {"compact DATA truncated", d, data_compact.substr(0, 20), "truncated"},
      {"DATA unknown device", d, replace_first(data_json, "\"victim\"", "\"ghost-2\""),
       "unknown_device"},
      {"DATA without a session", d, data_json, "unknown_session"},
      {"DATA 7 KB", d, random_bytes(rng, 7 * 1024), "frame_too_large"},
      {"PSK lone brace", p, "{", "json_syntax"},
      {"PSK frame cap + 1", p, std::string(kMaxFrameSize + 1, 'x'), "frame_too_large"},
  };
}

using HostileMalformed = OnEachMqttClient;
DSEKP_ON_EACH_MQTT_CLIENT(HostileMalformed);

TEST_P(HostileMalformed, EveryMalformedMessageIsRejectedByNameWhileDevicesStream) {
  // The PSK baseline on, so that its decoder is attacked too.
  Bed bed({"legit-0", "legit-1", "legit-2", "victim"}, with_client({"--psk-baseline"}));
  ASSERT_TRUE(bed.start());
  std::vector<std::unique_ptr<Streamer>> streamers;
  ASSERT_TRUE(start_streamers(bed, {"legit-0", "legit-1", "legit-2"}, streamers));
  AsyncMqttClient attacker("attacker");
  ASSERT_TRUE(attacker.connect(bed.port()));
  const std::vector<Attack> list = attacks(bed.material("victim"));

  // One by one: each message's own reason.
  for (const Attack& a : list) {
    const Metrics before = bed.metrics();
    ASSERT_TRUE(attacker.publish(a.topic, a.payload)) << a.label;
    ASSERT_TRUE(bed.wait_rejections(before, 1)) << a.label;
    EXPECT_TRUE(rejection_deltas_are(before, bed.metrics(), {{a.reason, 1}})) << a.label;
  }

  // In bulk, five rounds back to back: exact totals per reason.
  constexpr int kRounds = 5;
  std::map<std::string, double> expected;
  for (const Attack& a : list) expected[a.reason] += kRounds;
  const Metrics before = bed.metrics();
  for (int round = 0; round < kRounds; ++round)
    for (const Attack& a : list) ASSERT_TRUE(attacker.publish(a.topic, a.payload));
  ASSERT_TRUE(attacker.wait_all_acked());
  ASSERT_TRUE(bed.wait_rejections(before, static_cast<double>(list.size() * kRounds)));
  const Metrics after = bed.metrics();
  EXPECT_TRUE(rejection_deltas_are(before, after, expected));
  // Not one of them was taken for a handshake or a frame, and nobody was evicted.
  EXPECT_EQ(delta(before, after, "dsekp_handshakes_total{outcome=\"accepted\"}"), 0);
  EXPECT_EQ(delta(before, after, "dsekp_sessions_evicted_total"), 0);

  expect_streamers_lost_nothing(bed, streamers);
  EXPECT_TRUE(bed.telemetry("victim").empty());
  expect_edge_healthy(bed);
}

}  // namespace
}  // namespace dsekp::hostile
