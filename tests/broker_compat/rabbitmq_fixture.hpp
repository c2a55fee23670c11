// The fixture of the single-node RabbitMQ tests (rabbitmq_test.cpp, rabbitmq_accounts_test.cpp):
// one private node for the whole program (it takes 10-20 s to start), the fleet fixture pointed
// at its MQTT listener, a skip where rabbitmq-server is not installed. The node stops when the
// program ends.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "fleet_fixture.hpp"
#include "shared_rabbitmq_cluster.hpp"

namespace dsekp::broker_compat {

/// The program's node (one program, one node).
using SharedRabbit = dsekp::test::SharedRabbitMqCluster<1>;

#define DSEKP_NEED_RABBIT()                                                              \
  if (dsekp::test::RabbitMqCluster::executable().empty())                                \
    GTEST_SKIP() << "rabbitmq-server is not installed (Debian: apt-get install "         \
                    "rabbitmq-server); the RabbitMQ broker-compatibility tests need it"; \
  ASSERT_NE(SharedRabbit::get(), nullptr) << SharedRabbit::error()

class RabbitMqTest : public FleetTest {
 protected:
  void SetUp() override { DSEKP_NEED_RABBIT(); }
  int broker_port() const override {
    return SharedRabbit::get() ? SharedRabbit::get()->mqtt_port(0) : 0;
  }
  std::string broker_log() const override {
    return SharedRabbit::get() ? SharedRabbit::get()->log(0) : "";
  }
};

}  // namespace dsekp::broker_compat
