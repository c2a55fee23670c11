// The broker probes (see mqtt_probes.hpp).
#include "mqtt_probes.hpp"

#include <chrono>
#include <memory>
#include <vector>

#include "probe_client.hpp"
#include "tests/support/mqtt_test_client.hpp"

namespace dsekp::broker_compat {
namespace {

using dsekp::test::MqttTestClient;
using dsekp::test::ProbeClient;
using namespace std::chrono_literals;

std::unique_ptr<ProbeClient> connected(int port, const std::string& id, bool clean = true) {
  auto c = std::make_unique<ProbeClient>(id, ProbeClient::Version::v311, clean);
  if (c->connect(port) != std::optional<int>(0)) return nullptr;
  return c;
}

}  // namespace

std::optional<int> probe_mqtt5_connect(int port) {
  ProbeClient v5("probe-v5", ProbeClient::Version::v5);
  return v5.connect(port);
}

QosObservation probe_qos(int port, int qos, const std::string& tag) {
  QosObservation o;
  const std::string topic = "dsekp/probe/qos/" + tag;
  auto sub = connected(port, "probe-qos-sub-" + tag);
  auto pub = connected(port, "probe-qos-pub-" + tag);
  if (!sub || !pub) return o;
  o.granted = sub->subscribe(topic, qos);
  o.publish_completed = pub->publish(topic, "payload", qos);
  o.publisher_closed = pub->lost();
  sub->wait_for_count(1, 1000ms);
  o.delivered = sub->received().size();
  if (o.delivered > 0) o.delivered_qos = sub->received()[0].qos;
  return o;
}

RetainedObservation probe_retained(int port) {
  RetainedObservation o;
  const std::string topic = "dsekp/probe/retained";
  if (auto pub = connected(port, "probe-retain-pub")) {
    if (!pub->publish(topic, "first", 1, true) || !pub->publish(topic, "last", 1, true)) return o;
  }
  auto sub = connected(port, "probe-retain-sub");
  if (!sub || sub->subscribe(topic, 1) != std::optional<int>(1)) return o;
  if (sub->wait_for_count(1)) {
    o.got_last = sub->received()[0].payload == "last";
    o.retain_flag = sub->received()[0].retain;
  }
  sub->drain(300ms);
  o.count = sub->received().size();
  if (auto clear = connected(port, "probe-retain-clear")) clear->publish(topic, "", 1, true);
  auto late = connected(port, "probe-retain-late");
  if (!late || late->subscribe(topic, 1) != std::optional<int>(1)) return o;
  late->drain(500ms);
  o.cleared = late->received().empty();
  return o;
}

PersistentObservation probe_persistent_session(int port) {
  PersistentObservation o;
  const std::string topic = "dsekp/probe/queued";
  {
    auto away = connected(port, "probe-persistent", false);
    if (!away || away->subscribe(topic, 1) != std::optional<int>(1)) return o;
    away->disconnect();
  }
  auto pub = connected(port, "probe-queue-pub");
  if (!pub) return o;
  for (int i = 0; i < 10; ++i)
    if (!pub->publish(topic, std::to_string(i), 1)) return o;
  auto back = connected(port, "probe-persistent", false);
  if (!back) return o;
  o.session_present = back->session_present();
  back->wait_for_count(10);
  back->drain(200ms);
  o.queued_delivered = back->received().size();
  o.in_order = o.queued_delivered == 10;
  for (std::size_t i = 0; i < back->received().size() && i < 10; ++i)
    if (back->received()[i].payload != std::to_string(i)) o.in_order = false;
  return o;
}

SharedObservation probe_shared_subscription(int port) {
  SharedObservation o;
  // The members are ProbeClients (they can wait for a while without expecting a message); the
  // ordinary subscriber and the publisher are MqttTestClients, as in the broker ACL test.
  ProbeClient a("probe-share-a"), b("probe-share-b");
  MqttTestClient plain("probe-plain"), pub("probe-share-pub");
  for (ProbeClient* c : {&a, &b})
    if (c->connect(port) != std::optional<int>(0)) return o;
  for (MqttTestClient* c : {&plain, &pub})
    if (c->connect(port, "", "") != std::optional<int>(0)) return o;
  o.granted_a = a.subscribe("$share/g/dsekp/data", 1);
  o.granted_b = b.subscribe("$share/g/dsekp/data", 1);
  if (plain.subscribe("dsekp/data") != std::optional<int>(1)) return o;
  for (ProbeClient* c : {&a, &b})
    if (c->subscribe("dsekp/probe/marker", 1) != std::optional<int>(1)) return o;
  for (int i = 0; i < 20; ++i)
    if (!pub.publish("dsekp/data", std::to_string(i))) return o;
  if (!pub.publish("dsekp/probe/marker", "end")) return o;
  plain.wait_for_count(20);
  o.plain = plain.received().size();
  // A marker after the 20 messages, then a short drain: a broker need not keep the order
  // between two subscriptions of one client (NATS runs one JetStream consumer per subscription).
  for (ProbeClient* c : {&a, &b}) {
    if (!c->wait_for_topic("dsekp/probe/marker")) return o;
    c->drain(300ms);
  }
  const auto count = [](const ProbeClient& c) {
    std::size_t n = 0;
    for (const auto& m : c.received()) n += m.topic == "dsekp/data" ? 1 : 0;
    return n;
  };
  o.a = count(a);
  o.b = count(b);
  // Whether a publish on the filter's literal text reaches the members (it should not: a topic
  // name starting with '$' is the broker's, and $share/... is a filter, not a topic).
  if (!pub.publish("$share/g/dsekp/data", "literal")) return o;
  o.literal_to_a = a.wait_for_topic("$share/g/dsekp/data", 1000ms);
  o.literal_to_b = b.wait_for_topic("$share/g/dsekp/data", 1000ms);
  return o;
}

TopicObservation probe_topic(int port, const std::string& topic, int round) {
  TopicObservation o;
  auto sub = connected(port, "probe-topic-sub-" + std::to_string(round));
  auto pub = connected(port, "probe-topic-pub-" + std::to_string(round));
  if (!sub || !pub) return o;
  o.granted = sub->subscribe(topic, 1);
  o.publish_completed = pub->publish(topic, "x", 1);
  o.publisher_closed = pub->lost();
  if (o.granted.value_or(128) <= 2 && sub->wait_for_count(1, 1000ms))
    o.delivered_topic = sub->received()[0].topic;
  return o;
}

std::optional<std::size_t> probe_payload(int port, std::size_t size, int round) {
  auto sub = connected(port, "probe-big-sub-" + std::to_string(round));
  auto pub = connected(port, "probe-big-pub-" + std::to_string(round));
  if (!sub || !pub || sub->subscribe("dsekp/probe/big", 1) != std::optional<int>(1))
    return std::nullopt;
  if (!pub->publish("dsekp/probe/big", std::string(size, 'x'), 1)) return std::nullopt;
  if (!sub->wait_for_count(1)) return std::nullopt;
  return sub->received()[0].payload.size();
}

}  // namespace dsekp::broker_compat
