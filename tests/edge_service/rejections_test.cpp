// DATA frames EdgeService must refuse without changing or writing anything (replays, forgeries,
// unknown sessions and devices), and the PSK baseline, whose lack of replay protection is the
// paper's design and is reproduced on purpose.
#include <gtest/gtest.h>

#include "edge/registry/text_encoding.hpp"
#include "service_fixture.hpp"

namespace dsekp::edge::testing {
namespace {

TEST_F(EdgeServiceTest, ReplayedDataIsRefusedAndWritesNoRow) {
  ScriptedDevice device(material_, 21);
  handshake(device, Encoding::json);
  const Bytes first = device.data(kReading, kNowMs, Encoding::json);
  const Bytes second = device.data(kReading, kNowMs + 1, Encoding::compact);
  ASSERT_TRUE(deliver(kDataTopic, first).ok());
  ASSERT_TRUE(deliver(kDataTopic, second).ok());
  expect_rejected(deliver(kDataTopic, first, kNowMs + 10), "replay");
  expect_rejected(deliver(kDataTopic, second, kNowMs + 10), "replay");
  EXPECT_EQ(sink_.rows.size(), 2u);
  EXPECT_EQ(sink_.table_rows(), 2);
  EXPECT_EQ(sink_.writes, 2);  // the sink never saw the replays
}

TEST_F(EdgeServiceTest, ForgedOrMisdirectedDataIsRefused) {
  ScriptedDevice device(material_, 22);
  handshake(device, Encoding::compact);
  DataFrame frame;
  (void)device.data(kReading, kNowMs, Encoding::compact, &frame);
  DataFrame tampered = frame;
  tampered.ciphertext.storage()[0] ^= 0x80;
  expect_rejected(deliver(kDataTopic, encoded(tampered, Encoding::compact)), "auth_failed");
  DataFrame wrong_iv = frame;
  wrong_iv.iv.mutable_view()[0] ^= 0x01;
  expect_rejected(deliver(kDataTopic, encoded(wrong_iv, Encoding::json)), "nonce_mismatch");
  DataFrame other_session = frame;
  other_session.sessctr = static_cast<std::uint16_t>(frame.sessctr + 1);
  expect_rejected(deliver(kDataTopic, encoded(other_session, Encoding::compact)),
                  "unknown_session");
  DataFrame unknown = frame;
  ASSERT_EQ(unknown.dev_id.assign("ghost-01"), Error::ok);
  expect_rejected(deliver(kDataTopic, encoded(unknown, Encoding::compact)), "unknown_device");
  // None of that moved the window or confirmed the session: the genuine frame still confirms it.
  const HandleResult r = deliver(kDataTopic, encoded(frame, Encoding::compact));
  ASSERT_TRUE(r.ok()) << r.reason_name();
  EXPECT_TRUE(r.session_confirmed);
  EXPECT_EQ(sink_.rows.size(), 1u);
}

TEST_F(EdgeServiceTest, DataOfASessionTheEdgeDoesNotHoldIsAnUnknownSession) {
  ScriptedDevice device(material_, 23);
  handshake(device, Encoding::json);
  // The edge's state is deleted behind its back (as if its database had been replaced).
  const Bytes frame = device.data(kReading, kNowMs, Encoding::json);
  ASSERT_TRUE(sqlite_->begin().ok());
  ASSERT_TRUE(sqlite_->remove(device.dev_id()).ok());
  ASSERT_TRUE(sqlite_->commit().ok());
  expect_rejected(deliver(kDataTopic, frame), "unknown_session");
  EXPECT_TRUE(sink_.rows.empty());
}

TEST_F(EdgeServiceTest, PskFramesRoundTripInBothEncodings) {
  ScriptedDevice device(material_, 24);
  for (const Encoding enc : {Encoding::json, Encoding::compact}) {
    PskFrame sealed;
    const Bytes wire = device.psk(kReading, 7, kNowMs - 250, enc, &sealed);
    const HandleResult r = deliver(kPskTopic, wire, kNowMs);
    ASSERT_TRUE(r.ok()) << r.reason_name();
    EXPECT_EQ(r.kind, MessageKind::psk);
    EXPECT_TRUE(r.publishes.empty());
    ASSERT_TRUE(r.frame.has_value());
    const AcceptedFrame& row = *r.frame;
    EXPECT_EQ(row.mode, Mode::psk);
    EXPECT_EQ(row.encoding, enc);
    EXPECT_EQ(row.dev_id, "esp32-01");
    EXPECT_EQ(row.sessctr, 0);
    EXPECT_EQ(row.seq, 7u);
    EXPECT_EQ(row.latency_ms, 250);
    EXPECT_EQ(row.payload_size, wire.size());
    EXPECT_EQ(text_of(row.plaintext), kReading);
    EXPECT_EQ(row.iv_b64, to_base64(sealed.iv.view()));  // PSK's random IV, as sent
    EXPECT_EQ(row.ciphertext_b64, to_base64(sealed.ciphertext.view()));
    EXPECT_EQ(row.tag_b64, to_base64(sealed.tag.view()));
  }
  EXPECT_EQ(sink_.table_rows(), 2);
  EXPECT_FALSE(has_state(device.dev_id()));  // the baseline keeps no state
}

// The baseline's documented weakness (PROTOCOL.md 4.4, docs/LOGS.md): no replay window, so a
// replayed frame is accepted and logged once per arrival. DSEKP's DATA path refuses the same.
TEST_F(EdgeServiceTest, ReplayedPskFrameIsAcceptedAgainByDesign) {
  ScriptedDevice device(material_, 25);
  const Bytes wire = device.psk(kReading, 0, kNowMs, Encoding::json);
  ASSERT_TRUE(deliver(kPskTopic, wire).ok());
  const HandleResult again = deliver(kPskTopic, wire, kNowMs + 60'000);
  ASSERT_TRUE(again.ok()) << again.reason_name();
  EXPECT_EQ(sink_.rows.size(), 2u);
  EXPECT_EQ(sink_.rows[1].seq, sink_.rows[0].seq);
}

TEST_F(EdgeServiceTest, PskFramesUnderAnotherKeyOrDeviceAreRefused) {
  ScriptedDevice device(material_, 26);
  PskFrame frame;
  (void)device.psk(kReading, 1, kNowMs, Encoding::compact, &frame);
  PskFrame tampered = frame;
  tampered.tag.mutable_view()[15] ^= 0x01;
  expect_rejected(deliver(kPskTopic, encoded(tampered, Encoding::compact)), "auth_failed");
  const DeviceMaterial other = add_device("esp32-02");
  PskFrame misattributed = frame;  // another registered device's name: its key does not fit
  misattributed.dev_id = other.credentials.dev_id;
  expect_rejected(deliver(kPskTopic, encoded(misattributed, Encoding::json)), "auth_failed");
  PskFrame unknown = frame;
  ASSERT_EQ(unknown.dev_id.assign("ghost-01"), Error::ok);
  expect_rejected(deliver(kPskTopic, encoded(unknown, Encoding::json)), "unknown_device");
  EXPECT_TRUE(sink_.rows.empty());
}

TEST_F(EdgeServiceTest, DisabledModesAreRefusedByName) {
  ScriptedDevice device(material_, 27);
  EdgeServiceConfig no_psk = test_config();
  no_psk.psk_enabled = false;
  start_edge(no_psk);
  const HandleResult psk = deliver(kPskTopic, device.psk(kReading, 0, kNowMs, Encoding::json));
  EXPECT_EQ(psk.reason, EdgeReason::mode_disabled);
  EXPECT_STREQ(psk.reason_name(), "mode_disabled");
  EXPECT_TRUE(psk.processed());
  EXPECT_TRUE(deliver(kInitTopic, device.init(Encoding::json)).ok());

  EdgeServiceConfig no_dsekp = test_config();
  no_dsekp.dsekp_enabled = false;
  start_edge(no_dsekp);
  EXPECT_EQ(deliver(kInitTopic, device.init_again(Encoding::json)).reason,
            EdgeReason::mode_disabled);
  EXPECT_EQ(deliver(kDataTopic, device.init_again(Encoding::json)).reason,
            EdgeReason::mode_disabled);
  EXPECT_EQ(send_downlink("esp32-01", bytes_of("x"), kNowMs).reason, EdgeReason::mode_disabled);
  EXPECT_TRUE(deliver(kPskTopic, device.psk(kReading, 1, kNowMs, Encoding::json)).ok());
}

// Per-device uplink topics (PROTOCOL.md section 2): the topic's last level names the device, and
// a frame naming another is refused before anything is looked up, so one device account cannot
// speak for another even where the broker lets it publish.
TEST_F(EdgeServiceTest, AFrameOnAPerDeviceTopicMustNameThatDevice) {
  add_device("esp32-02");
  ScriptedDevice device(material_, 24);
  const Bytes init = device.init(Encoding::json);
  const HandleResult elsewhere = deliver("dsekp/init/esp32-02", init);
  expect_rejected(elsewhere, "dev_id_mismatch");
  EXPECT_EQ(elsewhere.dev_id, "esp32-01");
  EXPECT_FALSE(has_state(device.dev_id()));
  const HandleResult own = deliver("dsekp/init/esp32-01", init);
  ASSERT_TRUE(own.ok()) << own.reason_name();
  ASSERT_EQ(own.publishes.size(), 1u);
  EXPECT_EQ(own.publishes[0].topic, "dsekp/init/ack/esp32-01");
  ASSERT_EQ(device.take_ack(own.publishes[0].payload), Error::ok);

  const Bytes data = device.data(kReading, kNowMs, Encoding::compact);
  expect_rejected(deliver("dsekp/data/esp32-02", data), "dev_id_mismatch");
  EXPECT_TRUE(sink_.rows.empty());
  const HandleResult accepted = deliver("dsekp/data/esp32-01", data);
  ASSERT_TRUE(accepted.ok()) << accepted.reason_name();
  EXPECT_TRUE(accepted.session_confirmed);
  // The shared topics keep working (the paper's experiment; registries from before).
  ASSERT_TRUE(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json)).ok());
  // Not per-device topics: deeper levels, an empty level.
  for (const char* topic : {"dsekp/data/esp32-01/x", "dsekp/data/", "dsekp/datax"}) {
    const HandleResult r = deliver(topic, device.data(kReading, kNowMs, Encoding::json));
    EXPECT_EQ(std::string_view(r.reason_name()), "unknown_topic") << topic;
  }
  EXPECT_EQ(sink_.rows.size(), 2u);
}

}  // namespace
}  // namespace dsekp::edge::testing
