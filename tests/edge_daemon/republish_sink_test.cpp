// RepublishSink and Home Assistant discovery (republish_sink.hpp, home_assistant.hpp): what is
// published after a commit, with which retain flag, and the bounds on what a device can make
// the edge announce. edge_daemon_test.cpp checks a late subscriber on a real broker.
#include "edge/sinks/republish_sink.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace dsekp::edge::sinks {
namespace {

using nlohmann::json;

struct Sent {
  std::string topic;
  std::string json;
  bool retain;
};

AcceptedFrame frame(const std::string& dev_id, const std::string& plaintext) {
  AcceptedFrame f;
  f.dev_id = dev_id;
  f.seq = 3;
  f.recvts_ms = 1'764'460'800'123;
  f.plaintext.assign(plaintext.begin(), plaintext.end());
  return f;
}

class RepublishSinkTest : public ::testing::Test {
 protected:
  RepublishSink sink(bool home_assistant, RepublishOptions options = {}) {
    if (options.topics.base() == "plain") options.topics = RepublishTopics("site1/plain");
    options.home_assistant = home_assistant;
    return RepublishSink(std::move(options),
                         [this](const std::string& t, const std::string& j, bool r) {
                           sent.push_back({t, j, r});
                         });
  }
  std::vector<Sent> sent;
};

TEST_F(RepublishSinkTest, AReadingGoesOutAfterTheCommitWithItsTime) {
  RepublishSink s = sink(false);
  ASSERT_TRUE(s.write(frame("esp32-01", R"({"t":24.5,"h":51})")));
  EXPECT_TRUE(sent.empty()) << "nothing before the commit";
  s.committed();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].topic, "site1/plain/esp32-01");
  EXPECT_FALSE(sent[0].retain);
  const json doc = json::parse(sent[0].json);
  EXPECT_EQ(doc["time"], "2025-11-30T00:00:00.123Z");
  EXPECT_EQ(doc["recvts_ms"], 1'764'460'800'123);
  EXPECT_EQ(doc["reading"]["t"], 24.5);
}

TEST_F(RepublishSinkTest, TheSessionConfirmingEmptyFrameAndRolledBackOnesAreNotReadings) {
  RepublishSink s = sink(false);
  ASSERT_TRUE(s.write(frame("esp32-01", "")));
  s.committed();
  EXPECT_TRUE(sent.empty());
  ASSERT_TRUE(s.write(frame("esp32-01", R"({"t":1})")));
  s.rolled_back();
  s.committed();
  EXPECT_TRUE(sent.empty());
}

TEST_F(RepublishSinkTest, HomeAssistantGetsRetainedConfigsOnceBeforeTheFirstState) {
  RepublishSink s = sink(true);
  ASSERT_TRUE(s.write(frame("esp32.01", R"({"t":24.5,"h":51,"label":"kitchen"})")));
  ASSERT_TRUE(s.write(frame("esp32.01", R"({"t":24.6,"h":52})")));
  s.committed();
  ASSERT_EQ(sent.size(), 4u);  // h and t configs, then two states
  for (const Sent& m : sent) EXPECT_TRUE(m.retain) << m.topic;
  EXPECT_EQ(sent[0].topic, "homeassistant/sensor/dsekp_esp32_01/h/config");
  EXPECT_EQ(sent[1].topic, "homeassistant/sensor/dsekp_esp32_01/t/config");
  EXPECT_EQ(sent[2].topic, "site1/plain/esp32.01");
  const json t = json::parse(sent[1].json);
  EXPECT_EQ(t["device_class"], "temperature");
  EXPECT_EQ(t["unit_of_measurement"], "°C");
  EXPECT_EQ(t["state_topic"], "site1/plain/esp32.01");
  EXPECT_EQ(t["value_template"], "{{ value_json.reading.t }}");
  EXPECT_EQ(t["unique_id"], "dsekp_esp32_01_t");
  EXPECT_EQ(t["device"]["name"], "esp32.01");
  EXPECT_EQ(json::parse(sent[0].json)["unit_of_measurement"], "%");

  sent.clear();
  ASSERT_TRUE(s.write(frame("esp32.01", R"({"t":25,"h":50,"lux":300})")));
  s.committed();
  ASSERT_EQ(sent.size(), 2u) << "only the new key is announced";
  EXPECT_EQ(sent[0].topic, "homeassistant/sensor/dsekp_esp32_01/lux/config");
  EXPECT_FALSE(json::parse(sent[0].json).contains("device_class")) << "an unknown key has none";
}

// A base topic of the operator's (Zigbee2MQTT style), retained states without Home Assistant,
// and discovery configs that name the edge's and the device's availability.
TEST_F(RepublishSinkTest, AConfiguredBaseTopicRetainAndAvailabilityInTheConfigs) {
  RepublishOptions options;
  options.topics = RepublishTopics("home/sensors");
  options.retain = true;
  RepublishSink retained = sink(false, options);
  ASSERT_TRUE(retained.write(frame("esp32-01", R"({"t":24.5})")));
  retained.committed();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].topic, "home/sensors/esp32-01");
  EXPECT_TRUE(sent[0].retain);

  sent.clear();
  options.edge_availability_topic = "home/sensors/edge/dsekp-edge/availability";
  RepublishSink discovered = sink(true, options);
  ASSERT_TRUE(discovered.write(frame("esp32-01", R"({"t":24.5})")));
  discovered.committed();
  ASSERT_EQ(sent.size(), 2u);
  const json config = json::parse(sent[0].json);
  EXPECT_EQ(config["state_topic"], "home/sensors/esp32-01");
  EXPECT_EQ(config["availability_mode"], "all");
  EXPECT_EQ(config["availability"],
            json::parse(R"([{"topic":"home/sensors/edge/dsekp-edge/availability"},
                            {"topic":"home/sensors/esp32-01/availability"}])"));
}

TEST_F(RepublishSinkTest, ADeviceCannotMakeTheEdgeAnnounceWithoutBound) {
  RepublishSink s = sink(true);
  json reading = json::object();
  for (int i = 0; i < 40; ++i) reading["k" + std::to_string(i)] = i;
  reading["bad/topic"] = 1;
  reading["{{ x }}"] = 1;
  reading[std::string(33, 'a')] = 1;
  ASSERT_TRUE(s.write(frame("esp32-01", reading.dump())));
  s.committed();
  std::size_t configs = 0;
  for (const Sent& m : sent)
    if (m.topic.starts_with("homeassistant/")) {
      ++configs;
      EXPECT_EQ(m.topic.find_first_of("{} "), std::string::npos) << m.topic;
      EXPECT_EQ(std::count(m.topic.begin(), m.topic.end(), '/'), 4) << m.topic;
    }
  EXPECT_EQ(configs, kMaxAnnouncedKeys);
  sent.clear();
  ASSERT_TRUE(s.write(frame("esp32-01", reading.dump())));
  s.committed();
  EXPECT_EQ(sent.size(), 1u) << "the bound holds across frames";
}

}  // namespace
}  // namespace dsekp::edge::sinks
