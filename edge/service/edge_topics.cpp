// Topic names and the classification of received topics (see edge_topics.hpp).
#include "edge_topics.hpp"

#include <utility>

namespace dsekp::edge {

EdgeTopics::EdgeTopics(std::string prefix)
    : prefix_(std::move(prefix)),
      init_(prefix_ + "dsekp/init"),
      data_(prefix_ + "dsekp/data"),
      psk_(prefix_ + "psk/data") {}

namespace {

// True if `topic` is `base` + "/" + one non-empty level, which goes to `dev_id`.
bool per_device(std::string_view topic, const std::string& base, std::string_view& dev_id) {
  if (topic.size() <= base.size() + 1 || !topic.starts_with(base) || topic[base.size()] != '/')
    return false;
  const std::string_view rest = topic.substr(base.size() + 1);
  if (rest.find('/') != std::string_view::npos) return false;
  dev_id = rest;
  return true;
}

}  // namespace

MessageKind EdgeTopics::classify(std::string_view topic,
                                 std::string_view* topic_dev_id) const noexcept {
  std::string_view dev_id;
  MessageKind kind = MessageKind::unknown;
  if (topic == data_) {  // the most frequent first
    kind = MessageKind::data;
  } else if (topic == psk_) {
    kind = MessageKind::psk;
  } else if (topic == init_) {
    kind = MessageKind::init;
  } else if (per_device(topic, data_, dev_id)) {
    kind = MessageKind::data;
  } else if (per_device(topic, init_, dev_id)) {
    kind = MessageKind::init;
  }
  if (topic_dev_id != nullptr) *topic_dev_id = dev_id;
  return kind;
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
