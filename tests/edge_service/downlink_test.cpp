// send_downlink: frames the device opens, on its topic, in the configured encoding, with seqs
// that advance; and the refusals (no confirmed session, unknown or invalid device, oversized).
#include <gtest/gtest.h>

#include <string>

#include "service_fixture.hpp"

namespace dsekp::edge::testing {
namespace {

TEST_F(EdgeServiceTest, DownlinkRoundTripsToTheDevice) {
  ScriptedDevice device(material_, 61);
  confirmed_session(device);
  for (int i = 0; i < 5; ++i) {
    const std::string command = R"({"relay":")" + std::to_string(i) + R"("})";
    const HandleResult r = send_downlink("esp32-01", bytes_of(command), kNowMs + i);
    ASSERT_TRUE(r.ok()) << r.reason_name();
    EXPECT_EQ(r.kind, MessageKind::downlink);
    EXPECT_FALSE(r.frame.has_value());
    ASSERT_EQ(r.publishes.size(), 1u);
    EXPECT_EQ(r.publishes[0].topic, "dsekp/down/esp32-01");
    EXPECT_EQ(r.publishes[0].qos, 1);
    EXPECT_EQ(detect_encoding(r.publishes[0].payload), Encoding::json);
    std::string text;
    ASSERT_EQ(device.open_down(r.publishes[0].payload, text), Error::ok);
    EXPECT_EQ(text, command);
    // The device refuses the same frame twice: the seqs really advance.
    EXPECT_EQ(device.open_down(r.publishes[0].payload, text), Error::replay);
  }
  EXPECT_EQ(tally_.downlinks, 5u);
}

// A device that speaks compact gets its downlink in compact (it was JSON for every device, even
// a compact-only one): the encoding of its newest accepted INIT, kept in its state, so also
// after a restart.
TEST_F(EdgeServiceTest, DownlinkGoesOutInTheEncodingOfTheDevicesInit) {
  ScriptedDevice device(material_, 62);
  confirmed_session(device, Encoding::compact);
  HandleResult r = send_downlink("esp32-01", bytes_of(""), kNowMs);
  ASSERT_TRUE(r.ok()) << r.reason_name();
  EXPECT_EQ(r.publishes[0].payload[0], static_cast<std::uint8_t>(FrameType::down));
  std::string text;
  EXPECT_EQ(device.open_down(r.publishes[0].payload, text), Error::ok);
  EXPECT_EQ(text, "");
  start_edge();  // the encoding is in the stored state
  r = send_downlink("esp32-01", bytes_of("x"), kNowMs);
  ASSERT_TRUE(r.ok()) << r.reason_name();
  EXPECT_EQ(r.publishes[0].payload[0], static_cast<std::uint8_t>(FrameType::down));
  // The device's next session in JSON: downlinks in JSON from then on.
  handshake(device, Encoding::json, kNowMs + 2'000);
  ASSERT_TRUE(
      deliver(kDataTopic, device.data(kReading, kNowMs + 2'001, Encoding::json), kNowMs + 2'002)
          .ok());
  r = send_downlink("esp32-01", bytes_of("y"), kNowMs + 2'003);
  ASSERT_TRUE(r.ok()) << r.reason_name();
  EXPECT_EQ(r.publishes[0].payload[0], '{');
  EXPECT_EQ(device.open_down(r.publishes[0].payload, text), Error::ok);
  EXPECT_EQ(text, "y");
}

TEST_F(EdgeServiceTest, DownlinkRefusals) {
  ScriptedDevice device(material_, 63);
  expect_rejected(send_downlink("esp32-01", bytes_of("x"), kNowMs), "no_session");
  handshake(device, Encoding::json);
  // Pending until the device's first frame confirms it (PROTOCOL.md 6.1 step 4).
  expect_rejected(send_downlink("esp32-01", bytes_of("x"), kNowMs), "no_session");
  expect_rejected(send_downlink("ghost-01", bytes_of("x"), kNowMs), "unknown_device");
  expect_rejected(send_downlink("not valid!", bytes_of("x"), kNowMs), "bad_dev_id");
  expect_rejected(send_downlink("", bytes_of("x"), kNowMs), "bad_dev_id");
  ASSERT_TRUE(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json)).ok());
  const Bytes big(kMaxPayloadSize + 1, 'x');
  expect_rejected(send_downlink("esp32-01", big, kNowMs), "payload_too_large");
  const Bytes largest(kMaxPayloadSize, 'x');
  const HandleResult r = send_downlink("esp32-01", largest, kNowMs);
  ASSERT_TRUE(r.ok()) << r.reason_name();
  std::string text;
  EXPECT_EQ(device.open_down(r.publishes[0].payload, text), Error::ok);
  EXPECT_EQ(text.size(), kMaxPayloadSize);
}

TEST(DownlinkLaneTest, EachLaneTakesEveryNthSeqAndTheTextIsChecked) {
  const DownlinkLane one{};
  EXPECT_EQ(one.first_at_or_after(0), 0u);
  EXPECT_EQ(one.first_at_or_after(41), 41u);
  const DownlinkLane second_of_three{1, 3};
  EXPECT_EQ(second_of_three.first_at_or_after(0), 1u);
  EXPECT_EQ(second_of_three.first_at_or_after(1), 1u);
  EXPECT_EQ(second_of_three.first_at_or_after(2), 4u);
  EXPECT_EQ(second_of_three.first_at_or_after(3), 4u);
  const DownlinkLane last_of_three{2, 3};
  EXPECT_EQ(last_of_three.first_at_or_after(3), 5u);
  EXPECT_EQ(last_of_three.first_at_or_after(5), 5u);
  DownlinkLane lane;
  std::string error;
  ASSERT_TRUE(parse_downlink_lane("2/3", lane, error)) << error;
  EXPECT_EQ(lane.index, 2u);
  EXPECT_EQ(lane.count, 3u);
  for (const char* bad : {"3/3", "0/0", "1", "/3", "1/", "a/3", "1/65", "-1/3", "1/3x", ""}) {
    EXPECT_FALSE(parse_downlink_lane(bad, lane, error)) << bad;
    EXPECT_NE(error.find("K/N"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace dsekp::edge::testing
