// Reading the credentials file: what `dsekp keys add` prints (one object or an array), and a
// clear error naming the file, the device and the field for each way it can be wrong.
#include "device/credentials.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace dsekp::device {
namespace {

using nlohmann::json;

const std::string kSecret(64, 'a');
const std::string kSalt = "00112233445566778899aabbccddeeff";  // 16 bytes
const std::string kPsk = "0f0e0d0c0b0a09080706050403020100";

json material(const std::string& dev_id) {
  return {
      {"dev_id", dev_id},
      {"generation", 1},
      {"dev_secret_hex", kSecret},
      {"edge_salt_hex", kSalt},
      {"psk_key_hex", kPsk},
      {"broker", {{"host", "127.0.0.1"}, {"port", 1883}, {"username", dev_id}, {"password", "pw"}}},
      {"topics",
       {{"init", "dsekp/init"},
        {"ack", "dsekp/init/ack/" + dev_id},
        {"data", "dsekp/data"},
        {"down", "dsekp/down/" + dev_id},
        {"psk", "psk/data"}}}};
}

/// The error message for `text`, or "" if it parsed.
std::string error_for(const std::string& text) {
  try {
    (void)parse_credentials(text, "creds.json");
  } catch (const CredentialsError& e) {
    return e.what();
  }
  return "";
}

TEST(Credentials, OneObjectAsKeysAddPrintsIt) {
  const auto devices = parse_credentials(material("esp32-01").dump(2), "creds.json");
  ASSERT_EQ(devices.size(), 1u);
  const ProvisionedDevice& d = devices[0];
  EXPECT_EQ(d.credentials.dev_id.str(), "esp32-01");
  EXPECT_EQ(d.credentials.dev_secret.view()[0], 0xAA);
  EXPECT_EQ(d.credentials.edge_salt.view().size(), 16u);
  EXPECT_EQ(d.credentials.edge_salt.view()[1], 0x11);
  EXPECT_EQ(d.psk_key.view()[0], 0x0F);
  EXPECT_EQ(d.psk_key.view()[15], 0x00);
  EXPECT_TRUE(d.has_psk_key);
  EXPECT_EQ(d.username, "esp32-01");
  EXPECT_EQ(d.password, "pw");
  EXPECT_EQ(d.topics.ack, "dsekp/init/ack/esp32-01");
  EXPECT_EQ(d.topics.down, "dsekp/down/esp32-01");
  EXPECT_EQ(d.topics.psk, "psk/data");
}

TEST(Credentials, ArrayKeepsOrderAndTopicsAndLoginAreOptional) {
  json minimal = material("b");
  minimal.erase("broker");
  minimal.erase("topics");
  json prefixed = material("c");
  prefixed["topics"]["data"] = "site1/dsekp/data";
  const auto devices =
      parse_credentials(json::array({material("a"), minimal, prefixed}).dump(), "x");
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].credentials.dev_id.str(), "a");
  EXPECT_EQ(devices[1].credentials.dev_id.str(), "b");
  EXPECT_EQ(devices[1].username, "");  // anonymous
  EXPECT_EQ(devices[1].topics.ack, "dsekp/init/ack/b");
  EXPECT_EQ(devices[1].topics.init, "dsekp/init");
  EXPECT_EQ(devices[2].topics.data, "site1/dsekp/data");
}

// `dsekp keys add` prints the PSK baseline's key only with --psk-baseline: without it the
// device is a DSEKP device only.
TEST(Credentials, ThePskKeyIsOptional) {
  json dsekp_only = material("d");
  dsekp_only.erase("psk_key_hex");
  dsekp_only["topics"].erase("psk");
  const auto devices = parse_credentials(dsekp_only.dump(), "x");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_FALSE(devices[0].has_psk_key);
}

TEST(Credentials, LoadsAFileAndNamesItWhenMissing) {
  dsekp::test::TempDir dir;
  const std::string path = dir.file("creds.json");
  std::ofstream(path) << json::array({material("a"), material("b")}).dump();
  EXPECT_EQ(load_credentials(path).size(), 2u);
  try {
    (void)load_credentials(dir.file("nope.json"));
    FAIL() << "no error";
  } catch (const CredentialsError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.json: cannot read"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)load_credentials(dir.path()), CredentialsError);
}

struct BadCase {
  const char* name;
  std::string text;
  std::string expected;  // a part of the message
};

TEST(Credentials, EveryBadFileGetsAClearMessage) {
  auto with = [](const char* key, json value) {
    json m = material("dev-1");
    m[key] = std::move(value);
    return m.dump();
  };
  auto without = [](const char* key) {
    json m = material("dev-1");
    m.erase(key);
    return m.dump();
  };
  json wildcard = material("dev-1");
  wildcard["topics"]["ack"] = "dsekp/init/ack/+";
  json login = material("dev-1");
  login["broker"]["username"] = 5;
  const std::vector<BadCase> cases = {
      {"not json", "{\"dev_id\": ", "creds.json: not valid JSON"},
      {"not an object", "42", "expected a JSON object or an array"},
      {"empty array", "[]", "holds no device"},
      {"array of strings", "[\"x\"]", "device #1: expected a JSON object"},
      {"missing dev_id", without("dev_id"), "missing \"dev_id\""},
      {"bad dev_id", with("dev_id", "has space"), "\"dev_id\" must be 1-64 characters"},
      {"dev_id not a string", with("dev_id", 7), "\"dev_id\" must be a string"},
      {"missing secret", without("dev_secret_hex"), "device \"dev-1\": missing \"dev_secret_hex\""},
      {"short secret", with("dev_secret_hex", std::string(62, 'a')),
       "\"dev_secret_hex\" must be 64 hex digits (32 bytes), got 62 characters"},
      {"odd secret", with("dev_secret_hex", std::string(63, 'a')), "got 63 characters"},
      {"not hex", with("dev_secret_hex", std::string(63, 'a') + "g"),
       "\"dev_secret_hex\" is not hex (character 64)"},
      {"not hex, first digit of a pair", with("dev_secret_hex", std::string(62, 'a') + "ga"),
       "\"dev_secret_hex\" is not hex (character 63)"},
      {"missing salt", without("edge_salt_hex"), "missing \"edge_salt_hex\""},
      {"short salt", with("edge_salt_hex", std::string(30, '0')),
       "\"edge_salt_hex\" must be 32 to 64 hex digits (16 to 32 bytes), got 30"},
      {"long salt", with("edge_salt_hex", std::string(66, '0')), "got 66 characters"},
      {"long psk", with("psk_key_hex", std::string(34, '0')),
       "\"psk_key_hex\" must be 32 hex digits (16 bytes), got 34"},
      {"broker not object", with("broker", "x"), "\"broker\" must be an object"},
      {"username not string", login.dump(), "\"broker.username\" must be a string"},
      {"topic wildcard", wildcard.dump(), "\"topics.ack\" must be a non-empty topic"},
      {"duplicate", json::array({material("a"), material("a")}).dump(),
       "device #2: dev_id \"a\" appears twice"},
      {"second device bad", json::array({material("a"), json{{"dev_id", "b"}}}).dump(),
       "device #2 \"b\": missing \"dev_secret_hex\""},
  };
  for (const BadCase& c : cases) {
    const std::string message = error_for(c.text);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << c.name << ": got \"" << message << "\"";
    EXPECT_EQ(message.rfind("creds.json: ", 0), 0u) << c.name << ": " << message;
  }
}

}  // namespace
}  // namespace dsekp::device
