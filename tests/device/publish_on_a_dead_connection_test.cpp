// What a QoS 1 publish on a connection that has just died does with libmosquitto, against a real
// Mosquitto: the call fails, yet the message is kept and sent after the reconnect. The fleet
// (device/mqtt_fleet.cpp) counts such a frame as sent (publish_reaches_the_broker), or the edge
// would log a frame the device's client log never had (seen as "unexpected" in the network-fault
// suite).
#include <gtest/gtest.h>
#include <mosquitto.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>

#include "device/mqtt_fleet.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::device {
namespace {

/// Runs the client's network loop until `done` or 5 s.
template <typename Done>
bool pump(mosquitto* m, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    mosquitto_loop(m, 20, 1);
  }
  return done();
}

TEST(PublishOnADeadConnection, AQos1PublishThatFailsIsSentAfterTheReconnect) {
  test::TempDir dir;
  test::MosquittoBroker broker(dir.path(), "allow_anonymous true\n");
  test::MqttTestClient subscriber("dead-connection-subscriber");
  ASSERT_EQ(subscriber.connect(broker.port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(subscriber.subscribe("dsekp/data/dev-1"), std::optional<int>(1));

  mosquitto_lib_init();
  struct Destroy {
    void operator()(mosquitto* m) const noexcept {
      mosquitto_disconnect(m);
      mosquitto_destroy(m);
      mosquitto_lib_cleanup();
    }
  };
  const std::unique_ptr<mosquitto, Destroy> client(
      mosquitto_new("dead-connection-device", true, nullptr));
  ASSERT_NE(client, nullptr);
  mosquitto* m = client.get();
  bool connected = false;
  mosquitto_user_data_set(m, &connected);
  mosquitto_connect_callback_set(
      m, [](mosquitto*, void* flag, int rc) { *static_cast<bool*>(flag) = rc == 0; });
  ASSERT_EQ(mosquitto_connect(m, "127.0.0.1", broker.port(), 60), MOSQ_ERR_SUCCESS);
  ASSERT_TRUE(pump(m, [&] { return connected; }));

  // The connection dies under the client before it has noticed: its next write fails.
  ASSERT_EQ(::shutdown(mosquitto_socket(m), SHUT_WR), 0);
  int mid = 0;
  const std::string frame = "a frame sealed before the publish";
  const int rc = mosquitto_publish(m, &mid, "dsekp/data/dev-1", static_cast<int>(frame.size()),
                                   frame.data(), 1, false);
  EXPECT_NE(rc, MOSQ_ERR_SUCCESS) << "the write on the dead connection did not fail";
  EXPECT_TRUE(publish_reaches_the_broker(rc, 1)) << mosquitto_strerror(rc);

  // The fleet's way back: a reconnect of the same client, which sends what it kept.
  connected = false;
  ASSERT_EQ(mosquitto_reconnect(m), MOSQ_ERR_SUCCESS);
  ASSERT_TRUE(pump(m, [&] { return connected; }));
  EXPECT_TRUE(subscriber.wait_for_payload("dsekp/data/dev-1", frame))
      << "the publish that failed was not sent after the reconnect";
}

TEST(PublishOnADeadConnection, ErrorsBeforeTheQueueAndAtQos0SendNothing) {
  // NOMEM may also come after the queueing (building the packet); it counts as not sent.
  for (int rc : {MOSQ_ERR_INVAL, MOSQ_ERR_NOMEM, MOSQ_ERR_PAYLOAD_SIZE, MOSQ_ERR_OVERSIZE_PACKET,
                 MOSQ_ERR_MALFORMED_UTF8, MOSQ_ERR_QOS_NOT_SUPPORTED})
    EXPECT_FALSE(publish_reaches_the_broker(rc, 1)) << mosquitto_strerror(rc);
  for (int rc : {MOSQ_ERR_NO_CONN, MOSQ_ERR_CONN_LOST, MOSQ_ERR_ERRNO})
    EXPECT_FALSE(publish_reaches_the_broker(rc, 0)) << mosquitto_strerror(rc);
  EXPECT_TRUE(publish_reaches_the_broker(MOSQ_ERR_SUCCESS, 0));
}

}  // namespace
}  // namespace dsekp::device
