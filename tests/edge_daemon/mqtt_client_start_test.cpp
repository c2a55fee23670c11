// The MQTT transport's start (edge/mqtt/mqtt_client.hpp): a start that fails leaves nothing
// behind and can be tried again; a client that ran and was stopped is not started twice; a
// libmosquitto other than the verified release is refused unless allowed.
#include <gtest/gtest.h>
#include <mosquitto.h>

#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "edge/mqtt/mqtt_client.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::mqtt {
namespace {

transport::TransportHandlers ignore_messages() {
  transport::TransportHandlers h;
  h.message = [](std::string_view, ByteView, const transport::MessageProperties&) {
    return transport::BurstWait::may_wait;
  };
  return h;
}

TEST(MqttClientStart, AFailedStartCanBeTriedAgainAndAStoppedClientIsNotStartedTwice) {
  test::TempDir dir;
  MqttOptions bad;
  bad.tls.ca_file = dir.file("no-such-ca.pem");
  MqttClient refused(bad);
  std::string first;
  ASSERT_FALSE(refused.start(ignore_messages(), first));
  std::string second;
  ASSERT_FALSE(refused.start(ignore_messages(), second));
  EXPECT_EQ(second, first) << "the second try was refused for another reason";
  EXPECT_FALSE(refused.start({}, second)) << "started without a message handler";
  EXPECT_NE(second.find("message handler"), std::string::npos) << second;

  test::MosquittoBroker broker(dir.path().string(), "allow_anonymous true\n");
  MqttOptions good;
  good.port = static_cast<std::uint16_t>(broker.port());
  good.client_id = "mqtt-client-start-test";
  good.subscriptions = {"dsekp/test"};
  MqttClient client(good);
  std::atomic<bool> ready{false};
  transport::TransportHandlers handlers = ignore_messages();
  handlers.ready = [&ready] { ready = true; };
  std::string error;
  ASSERT_TRUE(client.start(std::move(handlers), error)) << error;
  for (int i = 0; i < 500 && !ready; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(ready.load());
  EXPECT_FALSE(client.start(ignore_messages(), error)) << "started twice";
  client.stop();
  EXPECT_FALSE(client.start(ignore_messages(), error)) << "a stopped client started again";
}

// The release the PUBACK-after-commit was read in is the only one accepted without the
// operator's say-so; this machine's library is that release (else every edge test here would
// run on an unverified library).
TEST(MqttClientStart, OnlyTheVerifiedLibmosquittoIsTakenWithoutBeingAllowed) {
  EXPECT_EQ(unverified_library_problem(2, 0, 11), "");
  for (const auto& [major, minor, revision] :
       {std::array{2, 0, 12}, std::array{2, 1, 0}, std::array{1, 6, 12}, std::array{2, 0, 10}}) {
    const std::string problem = unverified_library_problem(major, minor, revision);
    EXPECT_NE(problem.find("--allow-unverified-libmosquitto"), std::string::npos) << problem;
  }
  int major = 0, minor = 0, revision = 0;
  mosquitto_lib_version(&major, &minor, &revision);
  EXPECT_EQ(unverified_library_problem(major, minor, revision), "")
      << "the installed libmosquitto is not the verified release";
}

}  // namespace
}  // namespace dsekp::edge::mqtt
