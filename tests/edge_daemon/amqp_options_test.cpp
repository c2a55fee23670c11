// `dsekp edge --amqp`'s names and options: MQTT topics and RabbitMQ routing keys swap '/' and
// '.' (edge/amqp/amqp_topics.hpp), filters bind with '*' for '+', the node list, and what the
// edge refuses to combine with AMQP (by name, before it connects anywhere). The transport
// itself runs against a real RabbitMQ cluster in tests/broker_compat/rabbitmq_cluster_test.cpp.
#include "edge/amqp/amqp_topics.hpp"

#include <gtest/gtest.h>

#include "edge/registry/device_material.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::amqp {
namespace {

TEST(AmqpTopics, TopicsAndRoutingKeysSwapSlashAndDot) {
  EXPECT_EQ(routing_key_of_topic("site1/dsekp/data"), "site1.dsekp.data");
  EXPECT_EQ(routing_key_of_topic("dsekp/init/ack/kitchen.sensor"), "dsekp.init.ack.kitchen/sensor");
  EXPECT_EQ(topic_of_routing_key("dsekp.data.kitchen/sensor"), "dsekp/data/kitchen.sensor");
  for (const char* topic : {"dsekp/data", "a.b/c.d", "x", "dsekp/admin/request"})
    EXPECT_EQ(topic_of_routing_key(routing_key_of_topic(topic)), topic);
}

TEST(AmqpTopics, FiltersBindWithAStarForAPlus) {
  EXPECT_EQ(binding_key_of_filter("dsekp/data/+"), "dsekp.data.*");
  EXPECT_EQ(binding_key_of_filter("site/#"), "site.#");
  EXPECT_EQ(binding_key_of_filter("dsekp/init"), "dsekp.init");
}

TEST(AmqpNodes, AListOfHostsWithOptionalPorts) {
  std::vector<AmqpNode> nodes;
  std::string error;
  ASSERT_TRUE(parse_amqp_nodes("127.0.0.1:5673,broker-b,[::1]:5674,[::1]", nodes, error)) << error;
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0].host, "127.0.0.1");
  EXPECT_EQ(nodes[0].port, 5673);
  EXPECT_EQ(nodes[1].host, "broker-b");
  EXPECT_EQ(nodes[1].port, 5672);
  EXPECT_EQ(nodes[2].host, "::1");
  EXPECT_EQ(nodes[2].port, 5674);
  EXPECT_EQ(nodes[3].port, 5672);
}

TEST(AmqpNodes, BadListsAreRefusedWithThePartAtFault) {
  std::vector<AmqpNode> nodes;
  std::string error;
  EXPECT_FALSE(parse_amqp_nodes("", nodes, error));
  EXPECT_FALSE(parse_amqp_nodes("a:0", nodes, error));
  EXPECT_NE(error.find("\"0\""), std::string::npos) << error;
  EXPECT_FALSE(parse_amqp_nodes("a:65536", nodes, error));
  EXPECT_FALSE(parse_amqp_nodes("a:5672,", nodes, error));
  EXPECT_NE(error.find("without a host"), std::string::npos) << error;
  EXPECT_FALSE(parse_amqp_nodes(":5672", nodes, error));
  EXPECT_FALSE(parse_amqp_nodes("[::1", nodes, error));
  EXPECT_FALSE(parse_amqp_nodes("[::1]5672", nodes, error));
  EXPECT_FALSE(parse_amqp_nodes("a:56x", nodes, error));
}

// What only MQTT carries is refused by name at start-up, not left to fail later.
TEST(AmqpEdgeOptions, WhatAmqpCannotCarryIsRefusedByName) {
  dsekp::test::TempDir dir;
  const std::string registry = dir.file("registry.db");
  DeviceMaterial material;
  ASSERT_TRUE(testing::register_device(registry, "dev-1", material));
  const auto edge = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv{
        ::dsekp::test::cli_path(), "edge", "--db", registry, "--no-csv", "--metrics", "off"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return dsekp::test::run_command(argv, dir.path().string());
  };
  auto r = edge({"--amqp", "127.0.0.1:5672", "--broker", "127.0.0.1:1883"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--broker and --amqp: give one"), std::string::npos) << r.err;
  r = edge({"--amqp", "127.0.0.1:0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--amqp: not a port"), std::string::npos) << r.err;
  r = edge({"--amqp", "127.0.0.1:5672", "--shared-group", "g"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--shared-group is MQTT's way"), std::string::npos) << r.err;
  r = edge({"--amqp", "127.0.0.1:5672", "--republish", "--home-assistant"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot publish retained messages"), std::string::npos) << r.err;
  r = edge({"--amqp", "127.0.0.1:5672"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--amqp needs a login"), std::string::npos) << r.err;
  r = edge({"--amqp", "127.0.0.1:5672", "--tls-ca", registry});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no TLS to RabbitMQ"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dsekp::edge::amqp
