// Provisioning material: broker address parsing, and the JSON and C header carrying exactly the
// registry's keys.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "edge/registry/device_material.hpp"
#include "edge/registry/text_encoding.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge {
namespace {

TEST(BrokerAddress, ParsesHostPortAndBracketedIpv6) {
  BrokerAddress a;
  ASSERT_TRUE(parse_broker_address("broker.example:8883", a).ok());
  EXPECT_EQ(a.host, "broker.example");
  EXPECT_EQ(a.port, 8883);
  ASSERT_TRUE(parse_broker_address("[::1]:1883", a).ok());
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 1883);
}

TEST(BrokerAddress, RefusesMalformedAddresses) {
  for (const char* bad : {"", "host", "host:", ":1883", "host:0", "host:65536", "host:12x",
                          "ho\"st:1883", "ho st:1883", "::1:1883", "host:-1"}) {
    BrokerAddress a;
    EXPECT_EQ(parse_broker_address(bad, a).code(), RegistryErrc::invalid_argument) << bad;
  }
}

class MaterialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        DeviceRegistry::open(dir_.file("r.db"), OpenMode::create_if_missing, registry_).ok());
    ASSERT_TRUE(registry_->add("esp32-01", material_).ok());
  }
  test::TempDir dir_;
  std::unique_ptr<DeviceRegistry> registry_;
  DeviceMaterial material_;
  BrokerAddress broker_{"10.1.2.3", 1884};
};

TEST_F(MaterialTest, JsonCarriesTheRegistrysKeys) {
  const auto j = nlohmann::json::parse(material_json(material_, broker_));
  EXPECT_EQ(j["dev_id"], "esp32-01");
  EXPECT_EQ(j["generation"], material_.credentials.generation);
  EXPECT_EQ(j["dev_secret_hex"], to_hex(material_.credentials.dev_secret.view()));
  EXPECT_EQ(j["edge_salt_hex"], to_hex(registry_->edge_salt().view()));
  EXPECT_EQ(j["dev_secret_hex"].get<std::string>().size(), 64u);
  EXPECT_EQ(j["broker"]["host"], "10.1.2.3");
  EXPECT_EQ(j["broker"]["port"], 1884);
  EXPECT_EQ(j["broker"]["username"], "esp32-01");
  EXPECT_EQ(j["broker"]["password"], material_.broker_password);
  EXPECT_EQ(j["topics"]["ack"], "dsekp/init/ack/esp32-01");
  EXPECT_EQ(j["topics"]["down"], "dsekp/down/esp32-01");
}

// The baseline's static key reaches a device only when asked for (the comparison experiment):
// by default the material has neither the key nor the topic.
TEST_F(MaterialTest, ThePskKeyIsIncludedOnlyForThePskBaseline) {
  const auto plain = nlohmann::json::parse(material_json(material_, broker_));
  EXPECT_FALSE(plain.contains("psk_key_hex"));
  EXPECT_FALSE(plain["topics"].contains("psk"));
  EXPECT_EQ(material_c_header(material_, broker_).find("PSK"), std::string::npos);
  const auto psk =
      nlohmann::json::parse(material_json(material_, broker_, MaterialMode::with_psk_baseline));
  EXPECT_EQ(psk["psk_key_hex"], to_hex(material_.credentials.psk_key.view()));
  EXPECT_EQ(psk["topics"]["psk"], "psk/data");
  const std::string h = material_c_header(material_, broker_, MaterialMode::with_psk_baseline);
  EXPECT_NE(h.find("DSEKP_PSK_KEY[16]"), std::string::npos);
  EXPECT_NE(h.find("#define DSEKP_TOPIC_NAME_PSK \"psk/data\""), std::string::npos);
}

TEST_F(MaterialTest, HeaderCarriesTheKeysAsByteArrays) {
  const std::string h = material_c_header(material_, broker_);
  EXPECT_NE(h.find("#define DSEKP_DEV_ID \"esp32-01\""), std::string::npos);
  EXPECT_NE(h.find("#define DSEKP_BROKER_PORT 1884"), std::string::npos);
  EXPECT_NE(h.find("#define DSEKP_BROKER_PASSWORD \"" + material_.broker_password + "\""),
            std::string::npos);
  EXPECT_NE(h.find("DSEKP_DEV_SECRET[32]"), std::string::npos);
  EXPECT_NE(h.find("DSEKP_EDGE_SALT[32]"), std::string::npos);
  const std::string hex = to_hex(material_.credentials.dev_secret.view());
  EXPECT_NE(h.find("0x" + hex.substr(0, 2) + ", 0x" + hex.substr(2, 2)), std::string::npos);
}

}  // namespace
}  // namespace dsekp::edge
