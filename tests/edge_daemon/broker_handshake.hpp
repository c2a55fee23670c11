// The opening every streaming daemon test shares: a scripted device's client on the broker
// subscribes to its ACK topic, sends a fresh JSON INIT on dsekp/init and takes the edge's ACK.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "tests/support/daemon_test_support.hpp"
#include "tests/support/mqtt_test_client.hpp"

namespace dsekp::edge::testing {

/// On success `device` holds an established session with the edge. `context` (e.g. reading the
/// edge's stderr) is called only on a missing ACK, and its text added to the failure message.
inline ::testing::AssertionResult handshake_through_broker(
    dsekp::test::MqttTestClient& client, ScriptedDevice& device,
    const std::function<std::string()>& context = {}) {
  const std::string dev_id(device.dev_id().str());
  const std::string ack_topic = "dsekp/init/ack/" + dev_id;
  if (client.subscribe(ack_topic) != std::optional<int>(1))
    return ::testing::AssertionFailure() << "cannot subscribe to " << ack_topic;
  const auto now_s = static_cast<std::uint32_t>(unix_ms_now() / 1000);
  if (!client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s))))
    return ::testing::AssertionFailure() << "cannot publish the INIT";
  const auto ack = client.wait_for_message(ack_topic);
  if (!ack)
    return ::testing::AssertionFailure() << dev_id << ": no ACK\n" << (context ? context() : "");
  if (const Error e = device.take_ack(bytes_of(ack->payload)); e != Error::ok)
    return ::testing::AssertionFailure() << dev_id << ": ACK refused: " << error_name(e);
  return ::testing::AssertionSuccess();
}

}  // namespace dsekp::edge::testing
