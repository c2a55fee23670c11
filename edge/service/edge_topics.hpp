// The edge's MQTT topics (docs/PROTOCOL.md section 2) under a deployment's prefix.
//
// The prefix is put in front of every topic as given (include the trailing '/': "site1/" gives
// "site1/dsekp/init"). Received topics are compared exactly: MQTT topics are case-sensitive and
// a subscription without wildcards delivers only its own topic. INIT and DATA arrive on the
// shared topics ({prefix}dsekp/init, {prefix}dsekp/data) or on per-device ones
// ({prefix}dsekp/init/{dev_id}, {prefix}dsekp/data/{dev_id}; edge/registry/uplink_topics.hpp),
// whose last level names the device the frame must be from.
#pragma once

#include <string>
#include <string_view>

#include "edge_reason.hpp"

namespace dsekp::edge {

class EdgeTopics {
 public:
  explicit EdgeTopics(std::string prefix = "");

  /// The kind of message a received topic carries: init, data, psk, or unknown. For a
  /// per-device topic, `topic_dev_id` (if given) is set to its last level, else cleared.
  [[nodiscard]] MessageKind classify(std::string_view topic,
                                     std::string_view* topic_dev_id = nullptr) const noexcept;

  /// The uplink topics the edge subscribes to.
  [[nodiscard]] const std::string& init() const noexcept { return init_; }
  [[nodiscard]] const std::string& data() const noexcept { return data_; }
  [[nodiscard]] const std::string& psk() const noexcept { return psk_; }
  /// The subscriptions for the per-device INIT and DATA topics: `{prefix}dsekp/init/+`, ...
  [[nodiscard]] std::string per_device_init_filter() const { return init_ + "/+"; }
  [[nodiscard]] std::string per_device_data_filter() const { return data_ + "/+"; }

  /// `{prefix}dsekp/init/ack/{dev_id}`.
  [[nodiscard]] std::string ack(std::string_view dev_id) const;
  /// `{prefix}dsekp/down/{dev_id}`.
  [[nodiscard]] std::string downlink(std::string_view dev_id) const;
  /// `{prefix}dsekp/rekey/{dev_id}`.
  [[nodiscard]] std::string rekey(std::string_view dev_id) const;

 private:
  std::string prefix_;
  std::string init_;
  std::string data_;
  std::string psk_;
};

}  // namespace dsekp::edge
