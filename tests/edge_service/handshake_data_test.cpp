// The main path in both encodings: a full handshake and 100 DATA frames through EdgeService,
// with the ACK on the right topic in the INIT's encoding and every field of every sink row
// checked against what the device sent; plus the INIT refusals (unknown device, bad proof,
// stale timestamp), the retransmitted INIT and the topic prefix.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "edge/registry/text_encoding.hpp"
#include "service_fixture.hpp"

namespace dsekp::edge::testing {
namespace {

class HandshakeAndData : public EdgeServiceTest, public ::testing::WithParamInterface<Encoding> {};

TEST_P(HandshakeAndData, HundredFramesBecomeHundredCorrectRows) {
  const Encoding enc = GetParam();
  ScriptedDevice device(material_, 11);
  const HandleResult init = deliver(kInitTopic, device.init(enc), kNowMs);
  ASSERT_TRUE(init.ok()) << init.reason_name();
  EXPECT_EQ(init.kind, MessageKind::init);
  EXPECT_TRUE(init.handshake_accepted);
  EXPECT_FALSE(init.ack_retransmitted);
  ASSERT_EQ(init.publishes.size(), 1u);
  const Publish& ack = init.publishes[0];
  EXPECT_EQ(ack.topic, "dsekp/init/ack/esp32-01");
  EXPECT_EQ(ack.qos, 1);
  ASSERT_FALSE(ack.payload.empty());
  EXPECT_EQ(detect_encoding(ack.payload), enc);  // answered in the INIT's encoding
  ASSERT_EQ(device.take_ack(ack.payload), Error::ok);
  EXPECT_TRUE(sink_.rows.empty());

  for (std::uint32_t i = 0; i < 100; ++i) {
    const std::uint64_t sendts = kNowMs + 2000u * i;
    const std::uint64_t recvts = sendts + 40 + i % 7;
    const std::string reading = R"({"t":)" + std::to_string(20 + i) + "}";
    DataFrame sealed;
    const Bytes wire = device.data(reading, sendts, enc, &sealed);
    const HandleResult r = deliver(kDataTopic, wire, recvts);
    ASSERT_TRUE(r.ok()) << "frame " << i << ": " << r.reason_name();
    EXPECT_TRUE(r.publishes.empty());
    EXPECT_EQ(r.session_confirmed, i == 0);  // the first frame confirms the session
    ASSERT_TRUE(r.frame.has_value());
    const AcceptedFrame& row = *r.frame;
    EXPECT_EQ(row.mode, Mode::dsekp);
    EXPECT_EQ(row.encoding, enc);
    EXPECT_EQ(row.dev_id, "esp32-01");
    EXPECT_EQ(row.sessctr, device.session().sessctr());
    EXPECT_EQ(row.seq, i);
    EXPECT_EQ(row.sendts_ms, sendts);
    EXPECT_EQ(row.recvts_ms, recvts);
    EXPECT_EQ(row.recvts_us, recvts * 1000);  // the 3-argument handle() has ms only
    EXPECT_EQ(row.latency_ms, static_cast<std::int64_t>(recvts - sendts));
    EXPECT_EQ(row.payload_size, wire.size());
    EXPECT_EQ(text_of(row.plaintext), reading);
    EXPECT_EQ(row.ciphertext_b64, to_base64(sealed.ciphertext.view()));
    EXPECT_EQ(row.iv_b64, to_base64(sealed.iv.view()));  // the device's nonce, in both profiles
    EXPECT_EQ(row.tag_b64, to_base64(sealed.tag.view()));
    if (enc == Encoding::json) {
      // JSON: the row's base64 fields are the received text, character for character.
      const auto json = nlohmann::json::parse(wire.begin(), wire.end());
      EXPECT_EQ(row.ciphertext_b64, json.at("ciphertext").get<std::string>());
      EXPECT_EQ(row.iv_b64, json.at("iv").get<std::string>());
      EXPECT_EQ(row.tag_b64, json.at("tag").get<std::string>());
    }
  }
  EXPECT_EQ(sink_.rows.size(), 100u);
  EXPECT_EQ(sink_.table_rows(), 100);
}

INSTANTIATE_TEST_SUITE_P(Encodings, HandshakeAndData,
                         ::testing::Values(Encoding::json, Encoding::compact),
                         [](const ::testing::TestParamInfo<Encoding>& param) {
                           return param.param == Encoding::json ? "json" : "compact";
                         });

TEST_F(EdgeServiceTest, RetransmittedInitGetsTheSameAckAndChangesNothing) {
  ScriptedDevice device(material_, 12);
  const HandleResult first = deliver(kInitTopic, device.init(Encoding::compact));
  ASSERT_TRUE(first.ok());
  const HandleResult again =
      deliver(kInitTopic, device.init_again(Encoding::compact), kNowMs + 1000);
  ASSERT_TRUE(again.ok()) << again.reason_name();
  EXPECT_TRUE(again.ack_retransmitted);
  EXPECT_FALSE(again.handshake_accepted);
  ASSERT_EQ(again.publishes.size(), 1u);
  EXPECT_EQ(again.publishes[0].topic, first.publishes[0].topic);
  EXPECT_EQ(again.publishes[0].payload, first.publishes[0].payload);
  // The same INIT in the other encoding is the same INIT: the same ACK, in that encoding.
  const HandleResult json = deliver(kInitTopic, device.init_again(Encoding::json), kNowMs + 2000);
  ASSERT_TRUE(json.ok());
  EXPECT_TRUE(json.ack_retransmitted);
  EXPECT_EQ(detect_encoding(json.publishes[0].payload), Encoding::json);
  EXPECT_EQ(device.take_ack(json.publishes[0].payload), Error::ok);
}

// Replays of a pending INIT are retransmissions to the edge, answered without spending the
// device's INIT budget: so they are answered at most once per 500 ms per device (a device's
// own resends come 0.5 s or more apart), never once per replay.
TEST_F(EdgeServiceTest, ReplaysOfAPendingInitGetAtMostOneAckPerHalfSecond) {
  ScriptedDevice device(material_, 13);
  const Bytes init = device.init(Encoding::compact);
  ASSERT_TRUE(deliver(kInitTopic, init).ok());
  int acks = 0;
  int limited = 0;
  for (std::uint64_t i = 1; i < 300; ++i) {  // 299 replays within 1.5 s
    const HandleResult r = deliver(kInitTopic, init, kNowMs + i * 5);
    if (r.ok()) {
      EXPECT_TRUE(r.ack_retransmitted);
      EXPECT_EQ(r.publishes.size(), 1u);
      ++acks;
    } else {
      expect_rejected(r, "rate_limited");
      ++limited;
    }
  }
  EXPECT_EQ(acks, 2);  // at +500 ms and +1000 ms
  EXPECT_EQ(limited, 297);
  // The device's own retransmission after its backoff still gets the ACK.
  const HandleResult resend = deliver(kInitTopic, init, kNowMs + 2600);
  ASSERT_TRUE(resend.ok()) << resend.reason_name();
  EXPECT_EQ(device.take_ack(resend.publishes[0].payload), Error::ok);
}

TEST_F(EdgeServiceTest, InitOfAnUnknownDeviceIsRefusedSilently) {
  DeviceMaterial ghost;
  ASSERT_EQ(ghost.credentials.dev_id.assign("ghost-01"), Error::ok);
  (void)ghost.edge_salt.assign(registry_->edge_salt().view());
  ScriptedDevice device(ghost, 13);
  const HandleResult r = deliver(kInitTopic, device.init(Encoding::json));
  expect_rejected(r, "unknown_device");
  EXPECT_FALSE(has_state(device.dev_id()));
}

TEST_F(EdgeServiceTest, InitWithABadProofIsRefused) {
  ScriptedDevice device(material_, 14);
  InitFrame init;
  ASSERT_EQ(decode_init(device.init(Encoding::json), init), Error::ok);
  init.proof.mutable_view()[3] ^= 0x01;
  expect_rejected(deliver(kInitTopic, encoded(init, Encoding::json)), "bad_proof");
  // A device provisioned with another DEV_SECRET fails the same way.
  DeviceMaterial wrong;
  wrong.credentials.dev_id = material_.credentials.dev_id;
  wrong.edge_salt = material_.edge_salt;
  ScriptedDevice impostor(wrong, 15);  // all-zero secret
  expect_rejected(deliver(kInitTopic, impostor.init(Encoding::compact)), "bad_proof");
  EXPECT_FALSE(has_state(device.dev_id()));
}

TEST_F(EdgeServiceTest, StaleInitIsRefused) {
  ScriptedDevice device(material_, 16);
  // The device clock is 301 s behind the edge's (max_skew 300 s).
  expect_rejected(deliver(kInitTopic, device.init(Encoding::json, kNowS - 301)), "stale_timestamp");
  EXPECT_FALSE(has_state(device.dev_id()));
  // Within the window it is accepted.
  EXPECT_TRUE(deliver(kInitTopic, device.init(Encoding::json, kNowS - 299)).ok());
}

// The frame that confirms a session of a device with nothing to report (PROTOCOL.md 6.1 step 4)
// is accepted and confirms the session, but it is no reading: no row anywhere (the review found
// it stored and republished as `"reading":""`).
TEST_F(EdgeServiceTest, AnEmptyConfirmingFrameConfirmsTheSessionButIsNoReading) {
  ScriptedDevice device(material_, 51);
  handshake(device, Encoding::compact);
  const HandleResult confirm = deliver(kDataTopic, device.data("", kNowMs, Encoding::compact));
  ASSERT_TRUE(confirm.ok()) << confirm.reason_name();
  EXPECT_TRUE(confirm.session_confirmed);
  EXPECT_TRUE(sink_.rows.empty());
  EXPECT_EQ(sink_.table_rows(), 0);
  // Its seq is taken: a replay is refused, and the next frame is a reading as usual.
  const Bytes empty_again = device.data("", kNowMs + 1, Encoding::compact);
  ASSERT_TRUE(deliver(kDataTopic, empty_again).ok());
  expect_rejected(deliver(kDataTopic, empty_again), "replay");
  ASSERT_TRUE(deliver(kDataTopic, device.data(kReading, kNowMs + 2, Encoding::compact)).ok());
  ASSERT_EQ(sink_.rows.size(), 1u);
  EXPECT_EQ(sink_.table_rows(), 1);
  EXPECT_EQ(tally_.frames_accepted[static_cast<std::size_t>(Mode::dsekp)], 3u);
}

TEST_F(EdgeServiceTest, RowsCarryTheMicrosecondReceptionTime) {
  ScriptedDevice device(material_, 18);
  handshake(device, Encoding::json);
  const std::uint64_t recvts_us = kNowMs * 1000 + 789;
  const HandleResult data = service_->handle(
      kDataTopic, device.data(kReading, kNowMs - 5, Encoding::json), kNowMs, recvts_us);
  ASSERT_TRUE(data.ok()) << data.reason_name();
  EXPECT_EQ(data.frame->recvts_us, recvts_us);
  EXPECT_EQ(data.frame->recvts_ms, kNowMs);  // recvts_us / 1000
  EXPECT_EQ(data.frame->latency_ms, 5);
  const HandleResult psk = service_->handle(
      kPskTopic, device.psk(kReading, 0, kNowMs, Encoding::json), kNowMs, recvts_us + 1);
  ASSERT_TRUE(psk.ok()) << psk.reason_name();
  EXPECT_EQ(psk.frame->recvts_us, recvts_us + 1);
}

TEST_F(EdgeServiceTest, ResultsReportTheChangeInEstablishedSessions) {
  ScriptedDevice device(material_, 19);
  EXPECT_EQ(handshake(device, Encoding::json).established_delta, 0);  // pending, not established
  EXPECT_EQ(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json)).established_delta,
            1);  // the confirmation
  EXPECT_EQ(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json)).established_delta,
            0);
  // The store's count agrees.
  std::uint64_t sessions = 0;
  std::uint64_t unreadable = 0;
  ASSERT_TRUE(sqlite_->count_established(sessions, unreadable).ok());
  EXPECT_EQ(sessions, 1u);
  EXPECT_EQ(unreadable, 0u);
}

TEST_F(EdgeServiceTest, TopicPrefixAppliesToEveryTopic) {
  EdgeServiceConfig config = test_config();
  config.topic_prefix = "site1/";
  start_edge(config);
  ScriptedDevice device(material_, 17);
  const Bytes init = device.init(Encoding::json);
  const HandleResult bare = deliver(kInitTopic, init);
  EXPECT_EQ(bare.reason, EdgeReason::unknown_topic);
  const HandleResult r = deliver("site1/dsekp/init", init);
  ASSERT_TRUE(r.ok()) << r.reason_name();
  EXPECT_EQ(r.publishes[0].topic, "site1/dsekp/init/ack/esp32-01");
  ASSERT_EQ(device.take_ack(r.publishes[0].payload), Error::ok);
  EXPECT_TRUE(deliver("site1/dsekp/data", device.data(kReading, kNowMs, Encoding::json)).ok());
  EXPECT_TRUE(deliver("site1/psk/data", device.psk(kReading, 0, kNowMs, Encoding::json)).ok());
  const HandleResult down = send_downlink("esp32-01", bytes_of("on"), kNowMs);
  ASSERT_TRUE(down.ok()) << down.reason_name();
  EXPECT_EQ(down.publishes[0].topic, "site1/dsekp/down/esp32-01");
  EXPECT_EQ(service_->topics().data(), "site1/dsekp/data");
}

}  // namespace
}  // namespace dsekp::edge::testing
