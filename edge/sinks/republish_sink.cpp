// RepublishSink (see republish_sink.hpp).
#include "edge/sinks/republish_sink.hpp"

#include <nlohmann/json.hpp>
#include <utility>

#include "edge/sinks/server_csv_format.hpp"

namespace dsekp::edge::sinks {

RepublishSink::RepublishSink(RepublishOptions options, RepublishFn publish)
    : options_(std::move(options)), publish_(std::move(publish)) {}

std::string RepublishSink::to_json(const AcceptedFrame& row) {
  const std::string text(row.plaintext.begin(), row.plaintext.end());
  nlohmann::json reading = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (reading.is_discarded()) reading = text;
  nlohmann::json doc = {{"dev_id", row.dev_id},
                        {"mode", mode_name(row.mode)},
                        {"sessctr", row.sessctr},
                        {"seq", row.seq},
                        {"sendts_ms", row.sendts_ms},
                        {"recvts_ms", row.recvts_ms},
                        {"time", iso8601_utc_ms(row.recvts_ms)},
                        {"reading", std::move(reading)}};
  // replace: a non-UTF-8 reading must not make dump() throw.
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

SensorTopics RepublishSink::sensor_topics(const Message& m) const {
  SensorTopics topics{m.topic, {}};
  if (!options_.edge_availability_topic.empty())
    topics.availability = {options_.edge_availability_topic,
                           options_.topics.device_availability(m.dev_id)};
  return topics;
}

bool RepublishSink::write(const AcceptedFrame& row) {
  if (row.plaintext.empty()) return true;  // a session confirmation, not a reading
  // Built now (may throw: the unit rolls back), sent only in committed().
  staged_.push_back({row.dev_id, options_.topics.readings(row.dev_id), to_json(row),
                     std::string(row.plaintext.begin(), row.plaintext.end())});
  return true;
}

void RepublishSink::committed() noexcept {
  for (const Message& m : staged_) {
    try {
      if (options_.home_assistant)
        for (const DiscoveryMessage& d : discovery_.announce(m.dev_id, sensor_topics(m), m.reading))
          publish_(d.topic, d.json, true);
      publish_(m.topic, m.json, options_.retain || options_.home_assistant);
    } catch (...) {  // a lost republish must not take the edge down
    }
  }
  staged_.clear();
}

}  // namespace dsekp::edge::sinks
