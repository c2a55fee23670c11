// The emulator in front of a real Mosquitto broker, as `dsekp experiment --link` uses it: an MQTT
// client publishes through a delay=20ms link to a subscriber connected directly; every message
// arrives intact, and later than the one-way delay.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "linkemu/link_emulator.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::linkemu {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(LinkMosquitto, PublishesThroughTheLinkArriveAfterTheDelay) {
  dsekp::test::TempDir dir;
  dsekp::test::MosquittoBroker broker(dir.path().string(), "allow_anonymous true\n");
  LinkSpec spec;
  spec.delay = 20ms;
  LinkEmulator emulator(spec, 1);
  std::string error;
  const std::uint16_t port =
      emulator.start("127.0.0.1", 0, "127.0.0.1", static_cast<std::uint16_t>(broker.port()), error);
  ASSERT_NE(port, 0) << error;

  dsekp::test::MqttTestClient subscriber("linkemu-subscriber");
  ASSERT_EQ(subscriber.connect(broker.port(), "", ""), 0) << broker.log();
  ASSERT_EQ(subscriber.subscribe("linkemu/#"), 1);

  dsekp::test::MqttTestClient publisher("linkemu-publisher");
  const auto connect_started = Clock::now();
  ASSERT_EQ(publisher.connect(port, "", ""), 0) << broker.log();
  EXPECT_GE(Clock::now() - connect_started, 40ms);  // CONNECT and CONNACK both crossed the link

  constexpr std::size_t kMessages = 5;
  std::array<Clock::time_point, kMessages> sent{};
  std::array<Clock::time_point, kMessages> arrived{};
  std::array<std::optional<std::string>, kMessages> payloads;
  auto topic = [](std::size_t i) { return "linkemu/reading/" + std::to_string(i); };
  // The subscriber waits on its own thread, so each arrival is timed as it happens.
  std::thread receiver([&] {
    for (std::size_t i = 0; i < kMessages; ++i) {
      const auto m = subscriber.wait_for_message(topic(i));
      if (!m) return;
      arrived[i] = Clock::now();
      payloads[i] = m->payload;
    }
  });
  for (std::size_t i = 0; i < kMessages; ++i) {
    sent[i] = Clock::now();
    const bool acked = publisher.publish(topic(i), "reading " + std::to_string(i));
    EXPECT_TRUE(acked) << "no PUBACK for message " << i;
    if (!acked) break;
    EXPECT_GE(Clock::now() - sent[i], 40ms);  // PUBLISH up and PUBACK down
  }
  receiver.join();
  for (std::size_t i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(payloads[i].has_value()) << "message " << i << " never arrived";
    EXPECT_EQ(*payloads[i], "reading " + std::to_string(i));
    EXPECT_GE(arrived[i] - sent[i], 20ms) << "message " << i;
  }
  const LinkStats s = emulator.stats();
  EXPECT_EQ(s.connections_accepted, 1u);
  EXPECT_GT(s.bytes[upstream], 0u);
  EXPECT_GT(s.bytes[downstream], 0u);
  EXPECT_GE(s.held.min_us, 20'000u);
}

}  // namespace
}  // namespace dsekp::linkemu
