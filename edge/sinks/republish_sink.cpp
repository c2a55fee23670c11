// RepublishSink (see republish_sink.hpp).
#include "edge/sinks/republish_sink.hpp"

#include <nlohmann/json.hpp>
#include <utility>

namespace dsekp::edge::sinks {

RepublishSink::RepublishSink(std::string topic_prefix, RepublishFn publish)
    : prefix_(std::move(topic_prefix)), publish_(std::move(publish)) {}

std::string RepublishSink::to_json(const AcceptedFrame& row) {
  const std::string text(row.plaintext.begin(), row.plaintext.end());
  nlohmann::json reading = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (reading.is_discarded()) reading = text;
  nlohmann::json doc = {{"dev_id", row.dev_id},         {"mode", frame_mode_name(row.mode)},
                        {"sessctr", row.sessctr},       {"seq", row.seq},
                        {"sendts_ms", row.sendts_ms},   {"recvts_ms", row.recvts_ms},
                        {"reading", std::move(reading)}};
  // replace: a non-UTF-8 reading must not make dump() throw.
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool RepublishSink::write(const AcceptedFrame& row) {
  // Built now (may throw: the unit rolls back), sent only in committed().
  staged_.push_back({prefix_ + "plain/" + row.dev_id, to_json(row)});
  return true;
}

void RepublishSink::committed() noexcept {
  for (const Message& m : staged_) {
    try {
      publish_(m.topic, m.json);
    } catch (...) {  // a lost republish must not take the edge down
    }
  }
  staged_.clear();
}

}  // namespace dsekp::edge::sinks
