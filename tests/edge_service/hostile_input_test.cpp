// Hostile and misrouted input: unknown topics, garbage and oversized payloads on every topic,
// frames of one kind on another's topic, and byte-flipped copies of genuine frames. Each gets a
// named verdict, nothing is published, stored or written, and nothing throws or crashes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "service_fixture.hpp"

namespace dsekp::edge::testing {
namespace {

TEST_F(EdgeServiceTest, UnknownTopicsAreRefusedByName) {
  ScriptedDevice device(material_, 31);
  const Bytes init = device.init(Encoding::json);
  for (const char* topic :
       {"", "dsekp", "dsekp/init/", "dsekp/init/ack/esp32-01", "DSEKP/INIT", "/dsekp/init",
        "dsekp/data/x/y", "dsekp/down/esp32-01", "psk/data/", "dsekp/#", "+/init"}) {
    const HandleResult r = deliver(topic, init);
    EXPECT_EQ(r.reason, EdgeReason::unknown_topic) << topic;
    EXPECT_STREQ(r.reason_name(), "unknown_topic");
    EXPECT_EQ(r.kind, MessageKind::unknown);
    EXPECT_TRUE(r.publishes.empty());
    EXPECT_TRUE(r.processed());
  }
  EXPECT_FALSE(has_state(device.dev_id()));
}

// Garbage with the name the codecs give it, on every topic.
struct Garbage {
  std::string label;
  Bytes payload;
  const char* expected;  // null: any protocol rejection
};

std::vector<Garbage> garbage() {
  auto text = [](std::string_view s) { return Bytes(s.begin(), s.end()); };
  return {
      {"empty", {}, "frame_empty"},
      {"one brace", text("{"), "json_syntax"},
      {"empty object", text("{}"), "json_missing_field"},
      {"array", text("[1,2]"), "unknown_frame_type"},
      {"just over the cap", Bytes(kMaxFrameSize + 1, '{'), "frame_too_large"},
      {"a megabyte", Bytes(1 << 20, 0x03), "frame_too_large"},
      {"NULs", Bytes(64, 0x00), "unknown_frame_type"},
      {"deep nesting", text(std::string(1000, '[') + std::string(1000, ']')), nullptr},
      {"escaped dev_id", text(R"({"seq":0,"dev_id":"a\u0062","sessctr_id":1})"), nullptr},
      {"huge integer", text(R"({"seq":99999999999999999999999})"), nullptr},
      {"high bytes", Bytes(300, 0xFF), "unknown_frame_type"},
  };
}

TEST_F(EdgeServiceTest, GarbageOnEveryTopicGetsANamedReason) {
  for (const std::string_view topic : {kInitTopic, kDataTopic, kPskTopic}) {
    for (const Garbage& g : garbage()) {
      const HandleResult r = deliver(topic, g.payload);
      EXPECT_EQ(r.reason, EdgeReason::protocol_error) << topic << " / " << g.label;
      EXPECT_NE(r.error, Error::ok) << topic << " / " << g.label;
      if (g.expected != nullptr) {
        EXPECT_STREQ(r.reason_name(), g.expected) << topic << " / " << g.label;
      }
      EXPECT_TRUE(r.publishes.empty());
      EXPECT_FALSE(r.frame.has_value());
    }
  }
  EXPECT_EQ(sink_.writes, 0);
}

TEST_F(EdgeServiceTest, FramesOnAnotherKindsTopicAreRefused) {
  ScriptedDevice device(material_, 32);
  const Bytes init_json = device.init(Encoding::json);
  const Bytes init_compact = device.init_again(Encoding::compact);
  const Bytes psk_json = device.psk(kReading, 0, kNowMs, Encoding::json);
  const Bytes psk_compact = device.psk(kReading, 1, kNowMs, Encoding::compact);
  expect_rejected(deliver(kDataTopic, init_json), "json_unknown_field");
  expect_rejected(deliver(kDataTopic, init_compact), "unknown_frame_type");
  expect_rejected(deliver(kInitTopic, psk_json), "json_unknown_field");
  expect_rejected(deliver(kInitTopic, psk_compact), "unknown_frame_type");
  expect_rejected(deliver(kPskTopic, init_compact), "unknown_frame_type");
  // An ACK looped back onto the INIT topic (e.g. a misconfigured bridge) is not an INIT.
  const HandleResult ok = deliver(kInitTopic, init_compact);
  ASSERT_TRUE(ok.ok());
  expect_rejected(deliver(kInitTopic, ok.publishes[0].payload), "unknown_frame_type");
  ASSERT_EQ(device.take_ack(ok.publishes[0].payload), Error::ok);
  const Bytes data = device.data(kReading, kNowMs, Encoding::compact);
  expect_rejected(deliver(kPskTopic, data), "unknown_frame_type");
  expect_rejected(deliver(kInitTopic, data), "unknown_frame_type");
  EXPECT_EQ(sink_.writes, 0);
}

// Every single-byte change of a genuine INIT or DATA frame, in both encodings, is refused (the
// proofs and AEAD tags cover every field, and the codecs admit one spelling per value), and
// random buffers are refused too. The DATA frames were accepted first, so even an unchanged
// copy would be a replay.
TEST_F(EdgeServiceTest, MutatedFramesAndRandomBytesNeverGetThrough) {
  ScriptedDevice device(material_, 33);
  const Bytes init_json = device.init(Encoding::json);
  const Bytes init_compact = device.init_again(Encoding::compact);
  const HandleResult ack = deliver(kInitTopic, init_json);
  ASSERT_TRUE(ack.ok());
  ASSERT_EQ(device.take_ack(ack.publishes[0].payload), Error::ok);
  const Bytes data_json = device.data(kReading, kNowMs, Encoding::json);
  const Bytes data_compact = device.data(kReading, kNowMs + 1, Encoding::compact);
  ASSERT_TRUE(deliver(kDataTopic, data_json).ok());
  ASSERT_TRUE(deliver(kDataTopic, data_compact).ok());
  const std::size_t rows = sink_.rows.size();

  std::mt19937 random(33);
  struct Genuine {
    std::string_view topic;
    const Bytes* frame;
  };
  for (const Genuine& g : {Genuine{kInitTopic, &init_json}, Genuine{kInitTopic, &init_compact},
                           Genuine{kDataTopic, &data_json}, Genuine{kDataTopic, &data_compact}}) {
    for (std::size_t i = 0; i < g.frame->size(); ++i) {
      Bytes mutated = *g.frame;
      mutated[i] = static_cast<std::uint8_t>(mutated[i] ^ (1u << (random() % 8)));
      const HandleResult r = deliver(g.topic, mutated, kNowMs + 10);
      EXPECT_FALSE(r.ok()) << g.topic << " byte " << i;
      // Nothing but a REKEY request (a flipped sessctr names a session the edge does not hold).
      EXPECT_EQ(r.publishes.size(), r.rekey_requested ? 1u : 0u) << g.topic << " byte " << i;
    }
  }
  for (int n = 0; n < 500; ++n) {
    Bytes noise(random() % (kMaxFrameSize + 64));
    for (auto& b : noise) b = static_cast<std::uint8_t>(random());
    if (!noise.empty() && n % 2 == 0) noise[0] = '{';  // reach the JSON decoders too
    for (const std::string_view topic : {kInitTopic, kDataTopic, kPskTopic}) {
      const HandleResult r = deliver(topic, noise, kNowMs + 10);
      EXPECT_EQ(r.reason, EdgeReason::protocol_error);
    }
  }
  EXPECT_EQ(sink_.rows.size(), rows);
}

}  // namespace
}  // namespace dsekp::edge::testing
