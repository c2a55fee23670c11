// The results of a scripted mix of messages, counted by kind, outcome and reason
// (tests/support/result_tally.hpp): exactly the expected totals. The same results feed the
// daemon's metrics.
#include <gtest/gtest.h>

#include "service_fixture.hpp"

namespace dsekp::edge::testing {
namespace {

std::uint64_t of(const auto& array, auto index) {
  return array[static_cast<std::size_t>(index)];
}

TEST_F(EdgeServiceTest, CountersMatchAScriptedMix) {
  ScriptedDevice device(material_, 71);
  const Bytes init = device.init(Encoding::json);
  ASSERT_TRUE(deliver(kInitTopic, init).ok());                      // handshake
  ASSERT_TRUE(deliver(kInitTopic, init, kNowMs + 1000).ok());       // retransmission
  expect_rejected(deliver(kInitTopic, Bytes{'{'}), "json_syntax");  // garbage
  ASSERT_EQ(device.take_ack(deliver(kInitTopic, init, kNowMs + 2000).publishes[0].payload),
            Error::ok);
  const Bytes d0 = device.data(kReading, kNowMs, Encoding::json);
  ASSERT_TRUE(deliver(kDataTopic, d0).ok());  // confirms
  ASSERT_TRUE(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::compact)).ok());
  expect_rejected(deliver(kDataTopic, d0), "replay");
  expect_rejected(deliver(kDataTopic, d0), "replay");
  sink_.fail = true;
  EXPECT_EQ(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json)).reason,
            EdgeReason::sink_failure);
  sink_.fail = false;
  ASSERT_TRUE(deliver(kPskTopic, device.psk(kReading, 0, kNowMs, Encoding::json)).ok());
  ASSERT_TRUE(deliver(kPskTopic, device.psk(kReading, 1, kNowMs, Encoding::compact)).ok());
  EXPECT_EQ(deliver("nowhere", init).reason, EdgeReason::unknown_topic);
  ASSERT_TRUE(send_downlink("esp32-01", bytes_of("on"), kNowMs).ok());
  expect_rejected(send_downlink("ghost-01", bytes_of("on"), kNowMs), "unknown_device");

  const dsekp::test::ResultTally& c = tally_;
  EXPECT_EQ(of(c.messages, MessageKind::init), 4u);
  EXPECT_EQ(of(c.messages, MessageKind::data), 5u);
  EXPECT_EQ(of(c.messages, MessageKind::psk), 2u);
  EXPECT_EQ(of(c.messages, MessageKind::unknown), 1u);
  EXPECT_EQ(of(c.messages, MessageKind::downlink), 2u);
  EXPECT_EQ(c.handshakes, 1u);
  EXPECT_EQ(c.ack_retransmissions, 2u);
  EXPECT_EQ(of(c.frames_accepted, Mode::dsekp), 2u);
  EXPECT_EQ(of(c.frames_accepted, Mode::psk), 2u);
  EXPECT_EQ(c.downlinks, 1u);
  EXPECT_EQ(c.sessions_confirmed, 1u);
  EXPECT_EQ(c.sessions_evicted, 0u);
  EXPECT_EQ(c.stale_states_dropped, 0u);
  EXPECT_EQ(of(c.protocol_rejections, Error::json_syntax), 1u);
  EXPECT_EQ(of(c.protocol_rejections, Error::replay), 2u);
  EXPECT_EQ(of(c.protocol_rejections, Error::unknown_device), 1u);
  EXPECT_EQ(of(c.edge_rejections, EdgeReason::sink_failure), 1u);
  EXPECT_EQ(of(c.edge_rejections, EdgeReason::unknown_topic), 1u);
  EXPECT_EQ(of(c.edge_rejections, EdgeReason::ok), 0u);
  EXPECT_EQ(of(c.edge_rejections, EdgeReason::protocol_error), 0u);
  std::uint64_t protocol_total = 0;
  for (const std::uint64_t n : c.protocol_rejections) protocol_total += n;
  EXPECT_EQ(protocol_total, 4u);
  // Every well-formed JSON DATA/PSK frame (replays and the refused sink row included) took
  // simdjson's fast path; nothing fell back to the portable decoder.
  EXPECT_EQ(service_->decoder_stats().fast_accepts, 5u);
  EXPECT_EQ(service_->decoder_stats().portable_fallbacks, 0u);
}

TEST_F(EdgeServiceTest, EvictionsAreCountedWhenSessionsMakeWay) {
  EdgeServiceConfig config = test_config();
  config.max_established = 1;
  start_edge(config);
  ScriptedDevice device(material_, 72);
  confirmed_session(device);
  handshake(device, Encoding::json, kNowMs + 1000);
  const HandleResult r =
      deliver(kDataTopic, device.data(kReading, kNowMs + 1000, Encoding::json), kNowMs + 1000);
  ASSERT_TRUE(r.ok()) << r.reason_name();
  EXPECT_TRUE(r.session_confirmed);
  EXPECT_TRUE(r.session_evicted);
  const dsekp::test::ResultTally& c = tally_;
  EXPECT_EQ(c.sessions_confirmed, 2u);
  EXPECT_EQ(c.sessions_evicted, 1u);
}

}  // namespace
}  // namespace dsekp::edge::testing
