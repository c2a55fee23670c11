// The private RabbitMQ cluster a whole test program shares (engines/rabbitmq_cluster.hpp): its
// nodes take seconds each to start, so the suite's tests share one.
#pragma once

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "engines/rabbitmq_cluster.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::test {

using engines::RabbitMqCluster;

/// The nodes a whole test program shares (they take seconds to start): created by the first test
/// that asks, stopped by reset() (a suite's TearDownTestSuite). A start that fails is tried once
/// more in a fresh directory (the first failure printed): forming the cluster is the tests'
/// set-up, not what they test, and RabbitMQ 3.10's MQTT plugin has been seen to wait minutes
/// for a Raft leader of its own on a fresh cluster. get() is null after two failed starts, with
/// error() saying why.
template <int Nodes>
class SharedRabbitMqCluster {
 public:
  static RabbitMqCluster* get() {
    if (!tried_) {
      tried_ = true;
      for (int attempt = 0; attempt < 2 && cluster_ == nullptr; ++attempt) {
        dir_ = std::make_unique<TempDir>();
        try {
          cluster_ = std::make_unique<RabbitMqCluster>(dir_->file("rabbitmq"), Nodes);
        } catch (const std::exception& e) {
          error_ = e.what();
          if (attempt == 0)
            std::fprintf(stderr, "RabbitMQ cluster start failed, trying once more: %s\n",
                         error_.c_str());
        }
      }
    }
    return cluster_.get();
  }
  static const std::string& error() { return error_; }
  static void reset() {
    cluster_.reset();
    dir_.reset();
  }

 private:
  static inline bool tried_ = false;
  static inline std::string error_;
  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<RabbitMqCluster> cluster_;
};

}  // namespace dsekp::test
