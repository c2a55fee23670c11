// The republish topic layout and which base topics are refused (republish_topics.hpp), and that
// the broker grants follow a configured base (broker_grants.hpp).
#include "edge/registry/republish_topics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "edge/registry/broker_grants.hpp"

namespace dsekp::edge {
namespace {

TEST(RepublishTopics, TheDefaultBaseIsPlainUnderThePrefixAndEachShapeHasItsOwnDepth) {
  EXPECT_EQ(republish_base("site1/", ""), "site1/plain");
  const RepublishTopics t(republish_base("", "zigbee2mqtt-like/dsekp"));
  EXPECT_EQ(t.readings("esp32-01"), "zigbee2mqtt-like/dsekp/esp32-01");
  EXPECT_EQ(t.device_availability("esp32-01"), "zigbee2mqtt-like/dsekp/esp32-01/availability");
  EXPECT_EQ(t.edge_availability("edge-1"), "zigbee2mqtt-like/dsekp/edge/edge-1/availability");
  // A device named "edge" does not collide with the edge's topic.
  EXPECT_NE(t.device_availability("edge"), t.edge_availability("availability"));
  EXPECT_EQ(t.all(), "zigbee2mqtt-like/dsekp/#");
}

TEST(RepublishTopics, BasesThatWouldOverlapTheProtocolOrBreakTheGrantsAreRefused) {
  for (const std::string& bad : std::vector<std::string>{
           "a/+", "a/#", "a b", "a/%u", "$SYS/x", "/abs", "trail/", "a//b", "dsekp", "dsekp/plain",
           "psk", "homeassistant", "homeassistant/sensor", std::string(129, 'a')})
    EXPECT_NE(republish_base_problem("", bad), "") << bad;
  EXPECT_NE(republish_base_problem("site1/", "site1/dsekp/x"), "");
  for (const std::string& good :
       std::vector<std::string>{"", "plain", "telemetry/dsekp", "dsekpx", "site1/dsekp"})
    EXPECT_EQ(republish_base_problem("", good), "") << good;
  EXPECT_EQ(republish_base_problem("site1/", "dsekp/x"), "") << "another prefix's topics";
}

TEST(RepublishTopics, EdgesWriteAndReadersReadTheConfiguredBase) {
  GrantScope scope;
  scope.topic_prefix = "site1/";
  scope.republish_topic = "home/dsekp";
  const auto has = [](const std::vector<TopicGrant>& grants, TopicGrant g) {
    return std::find(grants.begin(), grants.end(), g) != grants.end();
  };
  EXPECT_TRUE(has(account_grants(AccountRole::edge, scope), {TopicAccess::write, "home/dsekp/#"}));
  EXPECT_TRUE(has(account_grants(AccountRole::reader, scope), {TopicAccess::read, "home/dsekp/#"}));
  EXPECT_FALSE(
      has(account_grants(AccountRole::reader, scope), {TopicAccess::read, "site1/plain/#"}));
  scope.republish_topic.clear();
  EXPECT_TRUE(
      has(account_grants(AccountRole::reader, scope), {TopicAccess::read, "site1/plain/#"}));
  for (const TopicGrant& g : device_grants("esp32-01", scope))
    EXPECT_EQ(g.filter.find("plain"), std::string::npos) << "devices never read readings";
}

}  // namespace
}  // namespace dsekp::edge
