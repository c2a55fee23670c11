// For tests that reach the edge's MQTT transport and must hold on every client the edge can run
// on (--mqtt-client; edge/daemon/edge_daemon.hpp kMqttClients): a fixture whose parameter is the
// client, and the instantiation over all of them, named after each.
//
//   using MySuite = dsekp::test::OnEachMqttClient;
//   DSEKP_ON_EACH_MQTT_CLIENT(MySuite);
//   TEST_P(MySuite, ...) { ... edge args: with_client({...}) ... }
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "edge/daemon/edge_daemon.hpp"

namespace dsekp::test {

class OnEachMqttClient : public ::testing::TestWithParam<std::string_view> {
 protected:
  /// `args` with --mqtt-client and the client under test.
  [[nodiscard]] std::vector<std::string> with_client(std::vector<std::string> args = {}) const {
    args.insert(args.end(), {"--mqtt-client", std::string(GetParam())});
    return args;
  }
};

}  // namespace dsekp::test

#define DSEKP_ON_EACH_MQTT_CLIENT(suite)                                                  \
  INSTANTIATE_TEST_SUITE_P(Clients, suite,                                                \
                           ::testing::ValuesIn(::dsekp::edge::daemon::kMqttClients),      \
                           [](const ::testing::TestParamInfo<std::string_view>& client) { \
                             return std::string(client.param);                            \
                           })
