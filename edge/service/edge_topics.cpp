// Topic names and the classification of received topics (see edge_topics.hpp).
#include "edge_topics.hpp"

#include <utility>

namespace dsekp::edge {

EdgeTopics::EdgeTopics(std::string prefix)
    : prefix_(std::move(prefix)),
      init_(prefix_ + "dsekp/init"),
      data_(prefix_ + "dsekp/data"),
      psk_(prefix_ + "psk/data") {}

MessageKind EdgeTopics::classify(std::string_view topic) const noexcept {
  if (topic == data_) return MessageKind::data;  // the most frequent first
  if (topic == psk_) return MessageKind::psk;
  if (topic == init_) return MessageKind::init;
  return MessageKind::unknown;
}

std::string EdgeTopics::ack(std::string_view dev_id) const {
  std::string topic = init_;
  topic += "/ack/";
  topic += dev_id;
  return topic;
}

std::string EdgeTopics::downlink(std::string_view dev_id) const {
  std::string topic = prefix_;
  topic += "dsekp/down/";
  topic += dev_id;
  return topic;
}

std::string EdgeTopics::rekey(std::string_view dev_id) const {
  std::string topic = prefix_;
  topic += "dsekp/rekey/";
  topic += dev_id;
  return topic;
}

}  // namespace dsekp::edge
