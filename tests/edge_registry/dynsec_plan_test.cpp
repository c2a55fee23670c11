// The dynamic-security plan without a broker: what it creates, changes and deletes for a given
// broker state, and what it refuses (dynsec_plan.hpp). dynamic_security_test.cpp runs it on a
// real Mosquitto.
#include "edge/broker_admin/dynsec_plan.hpp"
#include "edge/registry/broker_config.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dsekp::edge::broker_admin {
namespace {

using nlohmann::json;

std::vector<std::string> names(const std::vector<json>& commands) {
  std::vector<std::string> out;
  for (const json& c : commands)
    out.push_back(c["command"].get<std::string>() + " " +
                  c.value("username", c.value("rolename", std::string())));
  return out;
}

class DynsecPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    wanted_ = wanted_state({{"dev-a", "pa"}, {"dev-b", "pb"}},
                           {{{"edge-1", "pe"}, AccountRole::edge}}, GrantScope{});
  }

  /// A broker that holds exactly what is wanted.
  BrokerState in_line() const {
    BrokerState broker;
    for (const auto& [name, acls] : wanted_.roles) broker.roles[name] = {acls, true};
    for (const WantedClient& c : wanted_.clients)
      broker.clients[c.login.username] = {{c.role}, true};
    return broker;
  }

  std::vector<json> plan(const BrokerState& broker, const PlanOptions& options = {}) {
    std::vector<json> commands;
    const auto s = plan_commands(wanted_, broker, options, commands, summary_);
    EXPECT_TRUE(s.ok()) << s.message();
    return commands;
  }

  WantedState wanted_;
  PlanSummary summary_;
};

TEST_F(DynsecPlanTest, AnEmptyBrokerGetsEveryRoleBeforeAnyClient) {
  const auto commands = plan(BrokerState{});
  ASSERT_EQ(commands.size(), 5u /* roles */ + 3u /* clients */);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(commands[i]["command"], "createRole");
  EXPECT_EQ(commands[5]["command"], "createClient");
  EXPECT_EQ(summary_.roles_created, 5u);
  EXPECT_EQ(summary_.clients_created, 3u);
  for (const json& c : commands) EXPECT_EQ(c["textdescription"], kManagedMarker);
}

TEST_F(DynsecPlanTest, ABrokerInLineGetsNoCommandAndNoPasswordUnlessAsked) {
  EXPECT_TRUE(plan(in_line()).empty());
  PlanOptions rotate;
  rotate.set_password_for = {"dev-a"};
  EXPECT_EQ(names(plan(in_line(), rotate)), std::vector<std::string>{"setClientPassword dev-a"});
  PlanOptions every;
  every.set_every_password = true;
  EXPECT_EQ(plan(in_line(), every).size(), 3u);
}

TEST_F(DynsecPlanTest, AnEditedRoleOrClientIsPutBackAndOnlyThat) {
  BrokerState broker = in_line();
  auto& acls = broker.roles["dsekp-device-dev-a"].acls;
  acls.front().topic = "dsekp/data/#";  // widened by hand
  broker.clients["dev-b"].roles = {"dsekp-edge"};
  EXPECT_EQ(
      names(plan(broker)),
      (std::vector<std::string>{"removeRoleACL dsekp-device-dev-a", "addRoleACL dsekp-device-dev-a",
                                "removeClientRole dev-b", "addClientRole dev-b"}));
  EXPECT_EQ(summary_.roles_changed, 1u);
  EXPECT_EQ(summary_.clients_changed, 1u);
}

TEST_F(DynsecPlanTest, OnlyWhatDsekpCreatedIsDeleted) {
  BrokerState broker = in_line();
  broker.clients["dev-gone"] = {{"dsekp-device-dev-gone"}, true};
  broker.roles["dsekp-device-dev-gone"] = {{}, true};
  broker.clients["telegraf"] = {{"telegraf-role"}, false};
  broker.roles["telegraf-role"] = {{}, false};
  broker.clients["admin"] = {{"admin"}, false};
  EXPECT_EQ(names(plan(broker)), (std::vector<std::string>{"deleteClient dev-gone",
                                                           "deleteRole dsekp-device-dev-gone"}));
}

// The operator's name is left alone and reported; everything else still goes ahead, removals
// included (one clash must not keep a removed device's login alive).
TEST_F(DynsecPlanTest, ANameTheOperatorUsesIsLeftAloneAndTheRestGoesAhead) {
  BrokerState broker = in_line();
  broker.clients["dev-b"] = {{}, false};
  broker.clients["dev-gone"] = {{"dsekp-device-dev-gone"}, true};
  const auto commands = plan(broker);
  ASSERT_EQ(summary_.conflicts.size(), 1u);
  EXPECT_NE(summary_.conflicts[0].find("\"dev-b\""), std::string::npos);
  EXPECT_EQ(names(commands), std::vector<std::string>{"deleteClient dev-gone"});
  broker = {};
  broker.roles["dsekp-edge"] = {{}, false};
  const auto fresh = plan(broker);
  EXPECT_EQ(summary_.conflicts.size(), 1u);
  for (const json& c : fresh) {
    EXPECT_NE(c.value("rolename", std::string()), "dsekp-edge");
    EXPECT_NE(c.value("username", std::string()), "edge-1") << "its client needs that role";
  }
  EXPECT_EQ(fresh.size(), 4u + 2u) << "the other roles and clients";
}

TEST_F(DynsecPlanTest, EveryRoleGrantsItsTopicsAndClosesEverythingElse) {
  const auto& device = wanted_.roles.at("dsekp-device-dev-a");
  EXPECT_TRUE(std::count(device.begin(), device.end(),
                         DynsecAcl{"publishClientSend", "dsekp/data/dev-a", true, 1}));
  EXPECT_TRUE(std::count(device.begin(), device.end(),
                         DynsecAcl{"subscribePattern", "dsekp/init/ack/dev-a", true, 1}));
  for (const auto& [name, acls] : wanted_.roles)
    for (const char* filter : {"#", "$CONTROL/#", "$SYS/#"}) {
      EXPECT_TRUE(
          std::count(acls.begin(), acls.end(), DynsecAcl{"publishClientSend", filter, false, 0}))
          << name << " " << filter;
      EXPECT_TRUE(
          std::count(acls.begin(), acls.end(), DynsecAcl{"subscribePattern", filter, false, 0}))
          << name << " " << filter;
    }
}

// Home Assistant's discovery topics are granted only when asked for, and only to edges (write)
// and readers (read); the broker then keeps retained messages.
TEST(HomeAssistantGrants, OnlyWhenAskedAndOnlyToEdgesAndReaders) {
  const auto has = [](const std::vector<DynsecAcl>& acls, const char* type, const char* topic) {
    return std::count(acls.begin(), acls.end(), DynsecAcl{type, topic, true, 1}) == 1;
  };
  for (const bool on : {false, true}) {
    GrantScope scope;
    scope.home_assistant = on;
    const WantedState w = wanted_state({{"dev-a", "pa"}}, {}, scope);
    EXPECT_EQ(has(w.roles.at("dsekp-edge"), "publishClientSend", "homeassistant/sensor/+/+/config"),
              on);
    EXPECT_EQ(has(w.roles.at("dsekp-reader"), "subscribePattern", "homeassistant/#"), on);
    for (const auto& acl : w.roles.at("dsekp-device-dev-a"))
      EXPECT_EQ(acl.topic.find("homeassistant"), std::string::npos) << acl.topic;
    EXPECT_EQ(dynamic_security_conf_lines(on).find("retain_available true") != std::string::npos,
              on);
    EXPECT_EQ(broker_conf_lines("/p", "/a", on).find("retain_available true") != std::string::npos,
              on);
  }
}

TEST_F(DynsecPlanTest, TheListAnswersOfThePluginAreRead) {
  const json roles = json::parse(R"({"totalCount": 2, "roles": [
    {"rolename": "dsekp-edge", "textdescription": "managed by dsekp keys: edits here are overwritten",
     "acls": [{"acltype": "publishClientSend", "topic": "a/b", "allow": true, "priority": 1}]},
    {"rolename": "admin", "acls": [{"acltype": "subscribePattern", "topic": "#", "allow": true}]}]})");
  BrokerState state;
  std::size_t total = 0;
  std::string error;
  ASSERT_TRUE(parse_role_list(roles, state, total, error)) << error;
  EXPECT_EQ(total, 2u);
  EXPECT_TRUE(state.roles["dsekp-edge"].managed);
  EXPECT_FALSE(state.roles["admin"].managed);
  EXPECT_EQ(state.roles["admin"].acls.at(0).priority, -1) << "the plugin's default";
  const json clients = json::parse(
      R"({"totalCount": 1, "clients": [{"username": "admin", "roles": [{"rolename": "admin"}]}]})");
  ASSERT_TRUE(parse_client_list(clients, state, total, error)) << error;
  EXPECT_EQ(state.clients["admin"].roles, std::set<std::string>{"admin"});
  EXPECT_FALSE(
      parse_client_list(json::parse(R"({"clients": [{"roles": []}]})"), state, total, error));
  EXPECT_FALSE(parse_role_list(json::parse(R"({"totalCount": 0})"), state, total, error));
}

}  // namespace
}  // namespace dsekp::edge::broker_admin
