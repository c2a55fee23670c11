// RabbitMQ definitions from the registry's accounts, without a broker: the password hash against
// an independent computation (Python's hashlib: base64(salt || SHA-256(salt || password))), what
// each account's topic patterns let through (checked with std::regex, whose ECMAScript syntax
// covers what the patterns use once PCRE's end anchor `\z` is read as ECMAScript's `$`, which
// never matches before a newline), the vhost permissions and the stale-user list. That RabbitMQ
// itself accepts the document, the logins and the patterns is
// tests/broker_compat/rabbitmq_accounts_test.cpp.
#include <gtest/gtest.h>

#include <array>
#include <regex>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/broker_admin/rabbitmq_definitions.hpp"
#include "edge/registry/rabbitmq_password.hpp"

namespace dsekp::edge::broker_admin {
namespace {

TEST(RabbitMqPassword, MatchesAnIndependentComputation) {
  const std::array<std::uint8_t, 4> salt{1, 2, 3, 4};
  std::string hash;
  ASSERT_TRUE(rabbitmq_password_hash("dsekp-test-password", salt, hash).ok());
  EXPECT_EQ(hash, "AQIDBLJhnrn0ckjrIjNZ3bksh2S3dBr2UOiNZCLEMEGJZavH");
  const std::array<std::uint8_t, 3> short_salt{1, 2, 3};
  EXPECT_FALSE(rabbitmq_password_hash("x", short_salt, hash).ok());
}

TEST(RabbitMqPassword, FreshSaltsGiveDifferentHashes) {
  OpenSslRng rng;
  std::string a, b;
  ASSERT_TRUE(rabbitmq_password_hash("same", rng, a).ok());
  ASSERT_TRUE(rabbitmq_password_hash("same", rng, b).ok());
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), 48u);  // base64 of 4 + 32 bytes
}

class RabbitMqDefinitions : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.edge_user = "edge";
    std::vector<BrokerAccount> devices = {{"dev-a", "pa"}, {"kitchen.sensor", "pk"}};
    std::vector<ServiceAccount> accounts = {{{"edge", "pe"}, AccountRole::edge},
                                            {{"telegraf", "pt"}, AccountRole::reader},
                                            {{"dsekp-admin", "pd"}, AccountRole::downlink}};
    OpenSslRng rng;
    ASSERT_TRUE(rabbitmq_definitions(devices, accounts, options_, rng, document_).ok());
  }
  /// A pattern for std::regex: PCRE's `\z` (the very end) is ECMAScript's `$`.
  std::regex ecmascript(std::string pattern) {
    EXPECT_TRUE(pattern.ends_with("\\z")) << pattern;
    if (pattern.ends_with("\\z")) pattern.replace(pattern.size() - 2, 2, "$");
    return std::regex(pattern);
  }

  /// Whether `user`'s `kind` ("write"/"read") topic pattern matches `key`.
  bool topic_allows(const std::string& user, const std::string& kind, const std::string& key) {
    for (const auto& p : document_["topic_permissions"])
      if (p["user"] == user) {
        EXPECT_EQ(p["exchange"], "amq.topic");
        return std::regex_search(key, ecmascript(p[kind].get<std::string>()));
      }
    ADD_FAILURE() << "no topic permission for " << user;
    return false;
  }
  bool resource_allows(const std::string& user, const std::string& kind, const std::string& name) {
    for (const auto& p : document_["permissions"])
      if (p["user"] == user) return std::regex_search(name, ecmascript(p[kind].get<std::string>()));
    ADD_FAILURE() << "no permission for " << user;
    return false;
  }

  RabbitMqDefinitionsOptions options_;
  nlohmann::ordered_json document_;
};

TEST_F(RabbitMqDefinitions, EveryAccountIsAUserWithAHashAndAPermissionOfEachKind) {
  ASSERT_EQ(document_["users"].size(), 5u);
  for (const auto& u : document_["users"]) {
    EXPECT_EQ(u["hashing_algorithm"], "rabbit_password_hashing_sha256");
    EXPECT_EQ(u["password_hash"].get<std::string>().size(), 48u);
    ASSERT_EQ(u["tags"].size(), 1u);
    EXPECT_TRUE(u["tags"][0].get<std::string>().starts_with("dsekp-"));
  }
  EXPECT_EQ(document_["users"][3]["tags"][0], "dsekp-device");
  EXPECT_EQ(document_["permissions"].size(), 5u);
  EXPECT_EQ(document_["topic_permissions"].size(), 5u);
  EXPECT_EQ(document_.dump().find("\"pa\""), std::string::npos);  // no password in clear
}

TEST_F(RabbitMqDefinitions, ADevicePublishesOnlyItsUplinkAndReadsOnlyItsOwnTopics) {
  EXPECT_TRUE(topic_allows("dev-a", "write", "dsekp.init.dev-a"));
  EXPECT_TRUE(topic_allows("dev-a", "write", "dsekp.data.dev-a"));
  for (const char* key :
       {"dsekp.data.dev-b", "dsekp.data.dev-aa", "dsekp.data", "dsekp.init", "dsekp.init.ack.dev-a",
        "dsekp.down.dev-b", "dsekp.admin.downlink", "plain.dev-a.temp", "dsekp.data.dev-a.x"})
    EXPECT_FALSE(topic_allows("dev-a", "write", key)) << key;
  EXPECT_TRUE(topic_allows("dev-a", "read", "dsekp.init.ack.dev-a"));
  EXPECT_TRUE(topic_allows("dev-a", "read", "dsekp.down.dev-a"));
  for (const char* key : {"#", "dsekp.#", "dsekp.init.ack.*", "dsekp.init.ack.dev-b",
                          "dsekp.data.dev-a", "dsekp.init.ack.#"})
    EXPECT_FALSE(topic_allows("dev-a", "read", key)) << key;
  // A '.' in a dev_id is a '/' in a routing key (the MQTT plugin's swap).
  EXPECT_TRUE(topic_allows("kitchen.sensor", "write", "dsekp.data.kitchen/sensor"));
  EXPECT_FALSE(topic_allows("kitchen.sensor", "write", "dsekp.data.kitchen.sensor"));
  EXPECT_FALSE(topic_allows("kitchen.sensor", "write", "dsekp.data.kitchenXsensor"));
}

TEST_F(RabbitMqDefinitions, EdgesReadTheUplinkAndAnswerEveryDevice) {
  for (const char* key : {"dsekp.init", "dsekp.data", "dsekp.init.*", "dsekp.data.*",
                          "dsekp.data.dev-a", "dsekp.admin.downlink"})
    EXPECT_TRUE(topic_allows("edge", "read", key)) << key;
  EXPECT_FALSE(topic_allows("edge", "read", "#"));
  // The PSK topic, though the baseline is off here: the edge unbinds it at start.
  EXPECT_TRUE(topic_allows("edge", "read", "psk.data"));
  EXPECT_FALSE(topic_allows("dev-a", "write", "psk.data"));
  EXPECT_FALSE(topic_allows("edge", "read", "plain.#"));  // republished plaintext: readers only
  for (const char* key : {"dsekp.init.ack.dev-a", "dsekp.down.x", "dsekp.rekey.x", "plain.dev-a.t"})
    EXPECT_TRUE(topic_allows("edge", "write", key)) << key;
  EXPECT_FALSE(topic_allows("edge", "write", "dsekp.data.dev-a"));
  EXPECT_TRUE(topic_allows("telegraf", "read", "plain.#"));
  EXPECT_FALSE(topic_allows("telegraf", "read", "dsekp.data.*"));
  EXPECT_FALSE(topic_allows("telegraf", "write", "plain.dev-a.t"));
  EXPECT_TRUE(topic_allows("dsekp-admin", "write", "dsekp.admin.downlink"));
  EXPECT_FALSE(topic_allows("dsekp-admin", "write", "dsekp.down.dev-a"));
}

TEST_F(RabbitMqDefinitions, ResourcesAreTheExchangeAndTheAccountsOwnQueuesOnly) {
  EXPECT_TRUE(resource_allows("dev-a", "write", "amq.topic"));
  EXPECT_FALSE(resource_allows("dev-a", "write", "amq.default"));  // the default exchange
  EXPECT_FALSE(resource_allows("dev-a", "write", "dsekp-uplink"));
  EXPECT_TRUE(resource_allows("dev-a", "configure", "mqtt-subscription-dev-aqos1"));
  EXPECT_TRUE(resource_allows("dev-a", "read", "mqtt-subscription-dev-aqos0"));
  EXPECT_FALSE(resource_allows("dev-a", "read", "mqtt-subscription-dev-bqos1"));
  EXPECT_FALSE(resource_allows("dev-a", "configure", "amq.topic"));
  EXPECT_TRUE(resource_allows("edge", "configure", "dsekp-uplink"));
  EXPECT_TRUE(resource_allows("edge", "read", "dsekp-uplink"));
  EXPECT_FALSE(resource_allows("edge", "read", "mqtt-subscription-dev-aqos1"));
}

TEST_F(RabbitMqDefinitions, BracesAreRefused) {
  OpenSslRng rng;
  nlohmann::ordered_json out;
  std::vector<ServiceAccount> accounts = {{{"x{username}", "p"}, AccountRole::reader}};
  EXPECT_FALSE(rabbitmq_definitions({}, accounts, options_, rng, out).ok());
  RabbitMqDefinitionsOptions braced = options_;
  braced.scope.topic_prefix = "{vhost}/";
  EXPECT_FALSE(rabbitmq_definitions({}, {}, braced, rng, out).ok());
}

TEST_F(RabbitMqDefinitions, StaleUsersAreTheTaggedOnesTheDocumentLacks) {
  const std::string listed =
      R"([{"user":"guest","tags":["administrator"]},{"user":"dev-a","tags":["dsekp-device"]},)"
      R"({"user":"dev-gone","tags":["dsekp-device"]},{"user":"old-edge","tags":"dsekp-edge"},)"
      R"({"user":"ops","tags":[]}])";
  std::vector<std::string> stale;
  ASSERT_TRUE(stale_rabbitmq_users(listed, document_, stale).ok());
  EXPECT_EQ(stale, (std::vector<std::string>{"dev-gone", "old-edge"}));
  EXPECT_FALSE(stale_rabbitmq_users("not json", document_, stale).ok());
  EXPECT_FALSE(stale_rabbitmq_users(R"([{"tags":[]}])", document_, stale).ok());
}

}  // namespace
}  // namespace dsekp::edge::broker_admin
