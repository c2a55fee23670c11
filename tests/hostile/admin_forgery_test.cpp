// Downlink requests on an open broker, where anyone may publish on dsekp/admin/downlink: the
// edge itself checks each request's MAC under the registry's admin key and its age, so requests
// without a MAC, with a wrong one (a field changed after signing) or signed long ago are refused
// by name and seal nothing; only a request signed with the registry's key sends a downlink.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "async_mqtt_client.hpp"
#include "edge/admin/admin_auth.hpp"
#include "edge/admin/admin_protocol.hpp"
#include "edge/registry/device_registry.hpp"
#include "hostile_bed.hpp"

namespace dsekp::hostile {
namespace {

TEST(HostileAdmin, OnlyRequestsSignedWithTheRegistrysAdminKeyMakeTheEdgeSeal) {
  Bed bed({"victim"});
  ASSERT_TRUE(bed.start());
  AsyncMqttClient attacker("attacker");
  ASSERT_TRUE(attacker.connect(bed.port()));
  ASSERT_TRUE(attacker.subscribe("dsekp/init/ack/victim"));
  ASSERT_TRUE(attacker.subscribe("dsekp/down/victim"));
  ASSERT_TRUE(attacker.subscribe("dsekp/admin/result/+"));
  HostileDevice victim(bed.material("victim"), 61);
  ASSERT_TRUE(handshake_over(attacker, victim, victim.init(unix_s(), Encoding::json)));
  ASSERT_TRUE(send_and_wait(bed, attacker, "victim",
                            {victim.data(R"({"v":1})", unix_ms(), Encoding::json)}, 1));

  edge::admin::AdminKey key{};
  {
    std::unique_ptr<edge::DeviceRegistry> registry;
    ASSERT_TRUE(
        edge::DeviceRegistry::open(bed.registry_path(), edge::OpenMode::existing_only, registry)
            .ok());
    ASSERT_TRUE(registry->admin_key(key).ok());
  }
  const auto request = [](const std::string& id) {
    edge::admin::DownlinkRequest r;
    r.request_id = id;
    r.dev_id = "victim";
    const std::string text = R"({"relay":"on"})";
    r.payload.assign(text.begin(), text.end());
    return r;
  };
  edge::admin::DownlinkRequest unsigned_request = request("no-mac");
  edge::admin::DownlinkRequest wrong_key = request("wrong-key");
  edge::admin::sign(edge::admin::AdminKey{}, "", wrong_key, unix_ms());
  edge::admin::DownlinkRequest altered = request("altered");
  edge::admin::sign(key, "", altered, unix_ms());
  altered.sealed.back() ^= 1;  // the sealed command changed on its way
  edge::admin::DownlinkRequest stale = request("stale");
  edge::admin::sign(key, "", stale, unix_ms() - edge::admin::kMaxRequestAgeMs - 60'000);
  edge::admin::DownlinkRequest genuine = request("genuine");
  edge::admin::sign(key, "", genuine, unix_ms());
  // The format before requests were sealed: the command in clear, however well signed.
  ASSERT_TRUE(attacker.publish(
      "dsekp/admin/downlink",
      R"({"request_id":"in-clear","dev_id":"victim","payload_b64":"b24=","ts_ms":)" +
          std::to_string(unix_ms()) + R"(,"mac":")" + genuine.mac_hex + "\"}"));
  const std::map<std::string, std::string> expected = {
      {"in-clear", "bad_request"}, {"no-mac", "unauthenticated"}, {"wrong-key", "bad_mac"},
      {"altered", "bad_mac"},      {"stale", "stale_request"},    {"genuine", "ok"}};
  for (const auto* r : {&unsigned_request, &wrong_key, &altered, &stale, &genuine})
    ASSERT_TRUE(attacker.publish("dsekp/admin/downlink", edge::admin::encode(*r)));
  for (const auto& [id, reason] : expected) {
    const std::string topic = "dsekp/admin/result/" + id;
    ASSERT_TRUE(attacker.wait_for_messages(topic, 1)) << id << "\n" << bed.edge_stderr();
    const auto answer = nlohmann::json::parse(attacker.messages(topic)[0].payload);
    EXPECT_EQ(answer.at("reason"), reason) << id;
    EXPECT_EQ(answer.at("ok"), reason == "ok") << id;
  }
  // One downlink in all: the genuine one.
  ASSERT_TRUE(attacker.wait_for_messages("dsekp/down/victim", 1));
  EXPECT_EQ(attacker.messages("dsekp/down/victim").size(), 1u);
  expect_edge_healthy(bed);
}

}  // namespace
}  // namespace dsekp::hostile
