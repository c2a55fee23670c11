// Optional MQTT republish of decrypted readings, for consumers that should not hold any key:
// after the commit, each accepted frame with a reading goes out as JSON on B/{dev_id}
// (edge/registry/republish_topics.hpp; B is {prefix}plain unless configured), QoS 1, the
// Zigbee2MQTT shape of one topic per device:
//   {"dev_id":"esp32-01","mode":"dsekp","sessctr":7,"seq":12,"sendts_ms":...,"recvts_ms":...,
//    "time":"2026-12-02T21:00:00.123Z","reading":{"t":24.0,"h":51.0}}
// `time` is recvts_ms in ISO-8601 UTC. `reading` is the plaintext parsed as JSON when it is JSON,
// else the plaintext as a string (invalid UTF-8 replaced). A frame with an empty plaintext (the
// one a device sends only to confirm its session) is not a reading and is not republished.
// With `retain` the states are retained (a consumer that subscribes later gets each device's
// last reading); the broker must then allow retained messages (`dsekp keys broker-config
// --retain`). With `home_assistant` (which implies retain) Home Assistant discovery configs go
// out before a device's first state (home_assistant.hpp).
// Publishing after the commit means a crash in between can lose a republish, never send one for
// a frame that was not stored (PROTOCOL.md 6.5).
// Security: the plain topics carry decrypted data; the broker ACL must restrict who reads them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "edge/registry/republish_topics.hpp"
#include "edge/service/sink_writer.hpp"
#include "edge/sinks/home_assistant.hpp"

namespace dsekp::edge::sinks {

/// Sends one message (topic, JSON text, retained); called from committed(), so it must not
/// throw.
using RepublishFn =
    std::function<void(const std::string& topic, const std::string& json, bool retain)>;

struct RepublishOptions {
  RepublishTopics topics{"plain"};
  bool retain = false;          // retained states (see above)
  bool home_assistant = false;  // discovery configs (see above); implies retain
  // The edge's own availability topic, which discovery configs name beside the device's ("":
  // availability is not published, so the configs name none).
  std::string edge_availability_topic = {};
};

class RepublishSink final : public SinkWriter {
 public:
  RepublishSink(RepublishOptions options, RepublishFn publish);

  [[nodiscard]] bool write(const AcceptedFrame& row) override;
  void committed() noexcept override;
  void rolled_back() noexcept override { staged_.clear(); }
  void savepoint() noexcept override { mark_ = staged_.size(); }
  void rolled_back_to_savepoint() noexcept override {
    if (mark_ < staged_.size()) staged_.resize(mark_);
  }

  /// The JSON document for one frame (see above).
  [[nodiscard]] static std::string to_json(const AcceptedFrame& row);

 private:
  struct Message {
    std::string dev_id;
    std::string topic;
    std::string json;
    std::string reading;  // the plaintext, for discovery
  };
  [[nodiscard]] SensorTopics sensor_topics(const Message& m) const;

  RepublishOptions options_;
  RepublishFn publish_;
  HomeAssistantDiscovery discovery_;
  std::vector<Message> staged_;
  std::size_t mark_ = 0;  // staged_.size() at savepoint()
};

}  // namespace dsekp::edge::sinks
