// The built-in MQTT client's packet codec (edge/mqtt_builtin/mqtt5_packets.hpp): the bytes it
// writes, spelled out from OASIS MQTT 5.0 section 3, and what it refuses when it reads.
#include "edge/mqtt_builtin/mqtt5_packets.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace dsekp::edge::mqtt_builtin;
using Bytes = std::vector<std::uint8_t>;

dsekp::ByteView view(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The one packet in `bytes` (framing must find it whole).
RawPacket only_packet(const Bytes& bytes) {
  RawPacket p;
  std::size_t consumed = 0;
  EXPECT_EQ(next_packet(bytes, 0, p, consumed), Framing::packet);
  EXPECT_EQ(consumed, bytes.size());
  return p;
}

TEST(Mqtt5Packets, ConnectCarriesTheSessionTheLimitsTheWillAndTheLogin) {
  ConnectRequest r;
  r.client_id = "e";
  r.username = "u";
  r.password = "pw";
  r.keep_alive_s = 30;
  r.session_expiry_s = 0xFFFFFFFF;
  r.receive_maximum = 512;
  r.maximum_packet_size = 8192;
  r.will_topic = "w";
  const std::string off = "off";
  r.will_payload = view(off);
  r.will_retain = true;
  Bytes out;
  append_connect(out, r);
  const Bytes expected = {
      0x10,
      43,  // CONNECT, remaining length
      0,
      4,
      'M',
      'Q',
      'T',
      'T',
      5,                                 // protocol name and version
      0x80 | 0x40 | 0x20 | 0x08 | 0x04,  // user name, password, will retain, will QoS 1, will
      0,
      30,  // keep alive
      13,  // properties
      0x11,
      0xff,
      0xff,
      0xff,
      0xff,  // session expiry: never
      0x21,
      0x02,
      0x00,  // receive maximum 512
      0x27,
      0x00,
      0x00,
      0x20,
      0x00,  // maximum packet size 8192
      0,
      1,
      'e',  // client id
      0,    // will properties
      0,
      1,
      'w',
      0,
      3,
      'o',
      'f',
      'f',  // will topic, will payload
      0,
      1,
      'u',
      0,
      2,
      'p',
      'w'};  // user name, password
  EXPECT_EQ(out, expected);
}

TEST(Mqtt5Packets, ConnectWithoutLoginOrWillSetsNeitherFlag) {
  ConnectRequest r;
  r.client_id = "e";
  Bytes out;
  append_connect(out, r);
  ASSERT_GT(out.size(), 10u);
  EXPECT_EQ(out[9], 0x00);  // connect flags: clean start 0 as well
}

TEST(Mqtt5Packets, SubscribeAsksQos1ForEachFilterAndUnsubscribeListsThem) {
  Bytes out;
  append_subscribe(out, 7, {"a/#", "b"});
  EXPECT_EQ(out, (Bytes{0x82, 13, 0, 7, 0, 0, 3, 'a', '/', '#', 1, 0, 1, 'b', 1}));
  out.clear();
  append_unsubscribe(out, 8, {"a"});
  EXPECT_EQ(out, (Bytes{0xa2, 6, 0, 8, 0, 0, 1, 'a'}));
}

TEST(Mqtt5Packets, PublishRoundTripsWithItsCorrelationDataAndFlags) {
  const std::string payload(200, 'x');  // a two-byte remaining length
  const Bytes corr = {1, 2, 3};
  Bytes out;
  append_publish(out, "t/1", view(payload), 1, true, false, 0x1234, corr);
  EXPECT_EQ(out.size(), publish_size("t/1", view(payload), 1, corr));
  EXPECT_EQ(out[0], 0x33);  // PUBLISH, QoS 1, retain
  mark_dup(out);
  Publish p;
  ASSERT_STREQ(decode_publish(only_packet(out), p), "");
  EXPECT_EQ(p.topic, "t/1");
  EXPECT_EQ(p.qos, 1);
  EXPECT_TRUE(p.retain);
  EXPECT_TRUE(p.dup);
  EXPECT_EQ(p.packet_id, 0x1234);
  EXPECT_EQ(Bytes(p.correlation_data.begin(), p.correlation_data.end()), corr);
  EXPECT_EQ(std::string(p.payload.begin(), p.payload.end()), payload);
}

TEST(Mqtt5Packets, AckPingAndDisconnectAreTheirFixedBytes) {
  Bytes out;
  append_puback(out, 0x0102);
  append_pingreq(out);
  append_disconnect(out);
  append_disconnect(out, 0x95);
  EXPECT_EQ(out, (Bytes{0x40, 2, 1, 2, 0xc0, 0, 0xe0, 0, 0xe0, 1, 0x95}));
}

TEST(Mqtt5Packets, FramingWaitsForWholePacketsAndRefusesOversizeFromTheHeader) {
  RawPacket p;
  std::size_t consumed = 0;
  EXPECT_EQ(next_packet(Bytes{}, 0, p, consumed), Framing::need_more);
  EXPECT_EQ(next_packet(Bytes{0x30}, 0, p, consumed), Framing::need_more);
  EXPECT_EQ(next_packet(Bytes{0x30, 0x80}, 0, p, consumed), Framing::need_more);
  EXPECT_EQ(next_packet(Bytes{0x30, 3, 0, 1}, 0, p, consumed), Framing::need_more);
  // 268,435,455 announced in four bytes, with nothing after it: refused at once.
  EXPECT_EQ(next_packet(Bytes{0x30, 0xff, 0xff, 0xff, 0x7f}, 8192, p, consumed),
            Framing::too_large);
  // The whole packet counts: 8,190 bytes of body plus a 3-byte header is 8,193.
  EXPECT_EQ(next_packet(Bytes{0x30, 0xfe, 0x3f}, 8192, p, consumed), Framing::too_large);
  EXPECT_EQ(next_packet(Bytes{0x30, 0xfd, 0x3f}, 8192, p, consumed), Framing::need_more);
  EXPECT_EQ(next_packet(Bytes{0x30, 0xff, 0xff, 0xff, 0xff, 0x01}, 0, p, consumed),
            Framing::malformed);
  const Bytes two = {0xd0, 0, 0x40, 2, 0, 9};
  ASSERT_EQ(next_packet(two, 0, p, consumed), Framing::packet);
  EXPECT_EQ(p.type(), PacketType::pingresp);
  EXPECT_EQ(consumed, 2u);
}

TEST(Mqtt5Packets, PublishesThisClientNeverAskedForAreRefusedByRule) {
  Publish p;
  // QoS 3.
  EXPECT_STRNE(decode_publish({0x36, Bytes{0, 1, 't', 0, 1, 0}}, p), "");
  // A packet id of 0 at QoS 1.
  const Bytes zero_id = {0, 1, 't', 0, 0, 0};
  EXPECT_NE(std::string(decode_publish({0x32, zero_id}, p)).find("identifier 0"),
            std::string::npos);
  // A topic alias (the client allows none).
  const Bytes alias = {0, 1, 't', 0, 1, 3, 0x23, 0, 1};
  EXPECT_NE(std::string(decode_publish({0x32, alias}, p)).find("Topic Alias"), std::string::npos);
  // A topic longer than the packet, a property list longer than the packet.
  EXPECT_STRNE(decode_publish({0x30, Bytes{0, 9, 't'}}, p), "");
  EXPECT_STRNE(decode_publish({0x30, Bytes{0, 1, 't', 9, 0x01}}, p), "");
  // A property value cut short, an unknown property, an empty topic.
  EXPECT_STRNE(decode_publish({0x30, Bytes{0, 1, 't', 2, 0x09, 0}}, p), "");
  EXPECT_STRNE(decode_publish({0x30, Bytes{0, 1, 't', 1, 0x7f}}, p), "");
  EXPECT_STRNE(decode_publish({0x30, Bytes{0, 0, 0}}, p), "");
  // A QoS 0 PUBLISH with DUP.
  EXPECT_STRNE(decode_publish({0x38, Bytes{0, 1, 't', 0}}, p), "");
}

TEST(Mqtt5Packets, PublishPropertiesTheEdgeReadsAreReadAndTheOthersSkipped) {
  const Bytes body = {0,    1,    't',                   // topic
                      0,    5,                           // packet id
                      21,                                // properties
                      0x01, 1,                           // payload format
                      0x08, 0,    1,    'r',             // response topic
                      0x09, 0,    2,    7,   8,          // correlation data
                      0x26, 0,    1,    'k', 0, 1, 'v',  // user property
                      0x0B, 0x81, 0x01,                  // subscription id 129
                      'p'};
  Publish p;
  ASSERT_STREQ(decode_publish({0x32, body}, p), "");
  EXPECT_EQ(p.response_topic, "r");
  EXPECT_EQ(Bytes(p.correlation_data.begin(), p.correlation_data.end()), (Bytes{7, 8}));
  EXPECT_EQ(std::string(p.payload.begin(), p.payload.end()), "p");
}

TEST(Mqtt5Packets, ConnackGivesTheBrokersLimitsAndRefusesImpossibleOnes) {
  Connack c;
  const Bytes body = {1, 0, 13, 0x21, 0, 20, 0x27, 0, 0, 0x10, 0, 0x13, 0, 60, 0x24, 1};
  ASSERT_STREQ(decode_connack({0x20, body}, c), "");
  EXPECT_TRUE(c.session_present);
  EXPECT_EQ(c.reason, 0);
  EXPECT_EQ(c.receive_maximum, 20);
  EXPECT_EQ(c.maximum_packet_size, 4096u);
  EXPECT_EQ(c.server_keep_alive, 60);
  EXPECT_EQ(c.maximum_qos, 1);
  // An MQTT 3.1.1 broker's refusal (no properties) is read as a refusal.
  ASSERT_STREQ(decode_connack({0x20, Bytes{0, 1}}, c), "");
  EXPECT_EQ(c.reason, 1);
  EXPECT_STRNE(decode_connack({0x20, Bytes{0, 0, 3, 0x21, 0, 0}}, c), "");  // receive max 0
  EXPECT_STRNE(decode_connack({0x20, Bytes{2, 0, 0}}, c), "");              // reserved flag
  EXPECT_STRNE(decode_connack({0x21, Bytes{0, 0, 0}}, c), "");              // reserved bits
  EXPECT_STRNE(decode_connack({0x20, Bytes{0}}, c), "");                    // short
  EXPECT_STRNE(decode_connack({0x20, Bytes{0, 0, 2, 0x24, 2}}, c), "");     // maximum QoS 2
}

TEST(Mqtt5Packets, AcksGiveTheirIdAndReasons) {
  Ack a;
  ASSERT_STREQ(decode_ack({0x40, Bytes{0, 9}}, a), "");
  EXPECT_EQ(a.packet_id, 9);
  EXPECT_EQ(a.reasons, (Bytes{0}));
  ASSERT_STREQ(decode_ack({0x40, Bytes{0, 9, 0x87}}, a), "");
  EXPECT_EQ(a.reasons, (Bytes{0x87}));
  ASSERT_STREQ(decode_ack({0x90, Bytes{0, 3, 0, 1, 0x80}}, a), "");
  EXPECT_EQ(a.packet_id, 3);
  EXPECT_EQ(a.reasons, (Bytes{1, 0x80}));
  EXPECT_STRNE(decode_ack({0x90, Bytes{0, 3, 0}}, a), "");  // no reason codes
  EXPECT_STRNE(decode_ack({0x40, Bytes{0}}, a), "");        // short
}

TEST(Mqtt5Packets, DisconnectGivesItsReasonAndItsText) {
  Disconnect d;
  ASSERT_STREQ(decode_disconnect({0xe0, Bytes{}}, d), "");
  EXPECT_EQ(d.reason, 0);
  const Bytes taken_over = {0x8e, 4, 0x1f, 0, 1, 'x'};  // d's views point into it
  ASSERT_STREQ(decode_disconnect({0xe0, taken_over}, d), "");
  EXPECT_EQ(d.reason, 0x8e);
  EXPECT_EQ(d.reason_string, "x");
  EXPECT_STRNE(decode_disconnect({0xe0, Bytes{0x8e, 2, 0x21, 0}}, d), "");
}

}  // namespace
