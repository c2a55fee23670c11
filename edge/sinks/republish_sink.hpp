// Optional MQTT republish of decrypted readings, for consumers that should not hold any key:
// after the commit, each accepted frame goes out as JSON on `{prefix}plain/{dev_id}` (QoS 1):
//   {"dev_id":"esp32-01","mode":"dsekp","sessctr":7,"seq":12,"sendts_ms":...,"recvts_ms":...,
//    "reading":{"t":24.0,"h":51.0}}
// `reading` is the plaintext parsed as JSON when it is JSON, else the plaintext as a string
// (invalid UTF-8 replaced). Publishing after the commit means a crash in between can lose a
// republish, never send one for a frame that was not stored (PROTOCOL.md 6.5).
// Security: the plain topics carry decrypted data; the broker ACL must restrict who reads them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "edge/service/sink_writer.hpp"

namespace dsekp::edge::sinks {

/// Sends one message (topic, JSON text); called from committed(), so it must not throw.
using RepublishFn = std::function<void(const std::string& topic, const std::string& json)>;

class RepublishSink final : public SinkWriter {
 public:
  RepublishSink(std::string topic_prefix, RepublishFn publish);

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
    std::string topic;
    std::string json;
  };
  std::string prefix_;
  RepublishFn publish_;
  std::vector<Message> staged_;
  std::size_t mark_ = 0;  // staged_.size() at savepoint()
};

}  // namespace dsekp::edge::sinks
