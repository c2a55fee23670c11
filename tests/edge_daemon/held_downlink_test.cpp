// Downlinks for a device that is offline (edge/daemon/admin_handler.hpp, downlink_queue.hpp):
// the queue's bounds and expiry on their own, then `dsekp edge` on a real Mosquitto: a request
// for a device the edge has not heard from is answered "queued", held unsealed and sent when
// the device's next frame is accepted (a second result says "sent" with its seq); one held too
// long is answered "expired"; an unknown device is refused at once; a device's share of the
// queue is bounded; and an MQTT 5 client gets its results on its own response topic with its
// correlation data, while a response topic outside the result topics is refused.
#include <gtest/gtest.h>
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "edge/admin/admin_auth.hpp"
#include "edge/admin/admin_protocol.hpp"
#include "edge/daemon/downlink_queue.hpp"
#include "edge/registry/device_registry.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

using daemon::DownlinkQueue;
using daemon::QueuedDownlink;

QueuedDownlink held(const std::string& id, const std::string& dev, std::uint64_t expires_ms) {
  return {id, dev, {}, {"dsekp/admin/result/" + id, {}}, expires_ms};
}

TEST(DownlinkQueue, BoundedPerDeviceAndInAllAndTakenOldestFirst) {
  DownlinkQueue q(2, 3);
  EXPECT_TRUE(q.push(held("a1", "a", 10)));
  EXPECT_TRUE(q.push(held("a2", "a", 10)));
  EXPECT_FALSE(q.push(held("a3", "a", 10))) << "the device's share is full";
  EXPECT_TRUE(q.push(held("b1", "b", 10)));
  EXPECT_FALSE(q.push(held("c1", "c", 10))) << "the whole queue is full";
  EXPECT_FALSE(q.holds("c"));
  EXPECT_EQ(q.size(), 3u);
  auto a = q.take("a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.front().request_id, "a1");
  EXPECT_FALSE(q.holds("a"));
  a.pop_front();
  EXPECT_TRUE(q.push(held("a4", "a", 10)));
  q.put_back("a", std::move(a));  // a2 could not be sent: ahead of the newer a4
  auto again = q.take("a");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].request_id, "a2");
  EXPECT_EQ(again[1].request_id, "a4");
  EXPECT_EQ(q.size(), 1u);
}

TEST(DownlinkQueue, ExpiresWhatRanOutOfTimeOnly) {
  DownlinkQueue q(4, 8);
  ASSERT_TRUE(q.push(held("early", "a", 100)));
  ASSERT_TRUE(q.push(held("late", "a", 200)));
  ASSERT_TRUE(q.push(held("other", "b", 100)));
  EXPECT_TRUE(q.expire(99).empty());
  const auto out = q.expire(100);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_FALSE(q.holds("b"));
  EXPECT_EQ(q.take("a").front().request_id, "late");
}

// An MQTT 5 requester of its own (neither `dsekp edge send` nor the 3.1.1 test client): signs a
// request with the registry's admin key and publishes it with a Response Topic and Correlation
// Data; records what comes back on its response topic with the correlation data of each.
class Mqtt5Requester {
 public:
  struct Answer {
    std::string json;
    std::string correlation;
  };
  Mqtt5Requester(int port, std::string response_topic)
      : response_topic_(std::move(response_topic)) {
    mosquitto_lib_init();
    mosq_ = mosquitto_new("node-red-like", true, this);
    mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
    mosquitto_message_v5_callback_set(mosq_, &Mqtt5Requester::on_message);
    connected_ = mosquitto_connect_bind_v5(mosq_, "127.0.0.1", port, 30, nullptr, nullptr) ==
                     MOSQ_ERR_SUCCESS &&
                 mosquitto_loop_start(mosq_) == MOSQ_ERR_SUCCESS;
  }
  ~Mqtt5Requester() {
    mosquitto_disconnect(mosq_);
    mosquitto_loop_stop(mosq_, true);
    mosquitto_destroy(mosq_);
  }
  bool subscribe(const std::string& filter) {
    return connected_ && mosquitto_subscribe_v5(mosq_, nullptr, filter.c_str(), 1, 0, nullptr) ==
                             MOSQ_ERR_SUCCESS;
  }
  bool request(const std::string& json, const std::string& response_topic,
               const std::string& correlation) {
    mosquitto_property* props = nullptr;
    mosquitto_property_add_string(&props, MQTT_PROP_RESPONSE_TOPIC, response_topic.c_str());
    mosquitto_property_add_binary(&props, MQTT_PROP_CORRELATION_DATA, correlation.data(),
                                  static_cast<std::uint16_t>(correlation.size()));
    const int rc =
        mosquitto_publish_v5(mosq_, nullptr, "dsekp/admin/downlink", static_cast<int>(json.size()),
                             json.data(), 1, false, props);
    mosquitto_property_free_all(&props);
    return rc == MOSQ_ERR_SUCCESS;
  }
  /// Waits until `n` answers arrived on the response topic.
  bool wait_for(std::size_t n) {
    return wait_until(
        [&] {
          std::lock_guard lock(mutex_);
          return answers_.size() >= n;
        },
        std::chrono::seconds(10));
  }
  std::vector<Answer> answers() {
    std::lock_guard lock(mutex_);
    return answers_;
  }

 private:
  static void on_message(mosquitto*, void* self, const mosquitto_message* m,
                         const mosquitto_property* props) {
    auto* r = static_cast<Mqtt5Requester*>(self);
    if (r->response_topic_ != m->topic) return;
    void* data = nullptr;
    std::uint16_t size = 0;
    mosquitto_property_read_binary(props, MQTT_PROP_CORRELATION_DATA, &data, &size, false);
    std::lock_guard lock(r->mutex_);
    r->answers_.push_back({std::string(static_cast<const char*>(m->payload), m->payloadlen),
                           data == nullptr ? "" : std::string(static_cast<char*>(data), size)});
    std::free(data);
  }
  std::string response_topic_;
  mosquitto* mosq_ = nullptr;
  bool connected_ = false;
  std::mutex mutex_;
  std::vector<Answer> answers_;
};

class HeldDownlinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(register_device(registry_path_, "esp32-01", material_));
    std::filesystem::create_directories(dir_.file("broker"));
    broker_ = std::make_unique<dsekp::test::MosquittoBroker>(dir_.file("broker"),
                                                             "allow_anonymous true\n");
  }
  void start_edge(const std::vector<std::string>& extra = {}) {
    const std::string ready = dir_.file("edge.ready");
    std::filesystem::remove(ready);
    err_file_ = dir_.file("edge-" + std::to_string(++starts_) + ".err");
    std::vector<std::string> argv = {::dsekp::test::cli_path(),
                                     "edge",
                                     "--broker",
                                     address(),
                                     "--db",
                                     registry_path_,
                                     "--logs-dir",
                                     dir_.file("logs"),
                                     "--metrics",
                                     "off",
                                     "--ready-file",
                                     ready};
    argv.insert(argv.end(), extra.begin(), extra.end());
    edge_ = std::make_unique<dsekp::test::ChildProcess>(argv, dir_.file("edge.out"), err_file_);
    ASSERT_TRUE(
        wait_until([&] { return std::filesystem::exists(ready); }, std::chrono::seconds(10)))
        << dsekp::test::read_file(err_file_);
  }
  void stop_edge() {
    edge_->signal(SIGTERM);
    ASSERT_EQ(edge_->wait_for(std::chrono::seconds(10)), std::optional<int>(0));
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(broker_->port()); }

  /// `dsekp edge send`: its exit code and every result line it printed.
  struct Sent {
    int exit_code = -1;
    std::vector<nlohmann::json> results;
    std::string err;
  };
  Sent send(const std::string& dev_id, const std::string& payload,
            std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {
        ::dsekp::test::cli_path(), "edge", "send", "--broker", address(), "--db", registry_path_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {dev_id, payload});
    const auto r = dsekp::test::run_command(argv, dir_.path().string());
    Sent out{r.exit_code, {}, r.err};
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      out.results.push_back(nlohmann::json::parse(line, nullptr, false));
    return out;
  }

  /// The device: logs in, subscribes to its ACK and downlink topics, handshakes and confirms.
  void bring_up(dsekp::test::MqttTestClient& client, ScriptedDevice& device) {
    ASSERT_EQ(client.connect(broker_->port(), "", ""), std::optional<int>(0));
    ASSERT_EQ(client.subscribe("dsekp/init/ack/esp32-01"), std::optional<int>(1));
    ASSERT_EQ(client.subscribe("dsekp/down/esp32-01"), std::optional<int>(1));
    ASSERT_TRUE(client.publish(
        "dsekp/init/esp32-01",
        as_string(device.init(Encoding::json, static_cast<std::uint32_t>(unix_ms_now() / 1000)))));
    const auto ack = client.wait_for_message("dsekp/init/ack/esp32-01");
    ASSERT_TRUE(ack.has_value()) << dsekp::test::read_file(err_file_);
    ASSERT_EQ(device.take_ack(bytes_of(ack->payload)), Error::ok);
    send_reading(client, device, 0);
  }
  void send_reading(dsekp::test::MqttTestClient& client, ScriptedDevice& device, int i) {
    const std::size_t before = line_count(dir_.file("logs/server_logs_dsekp.csv"));
    ASSERT_TRUE(client.publish("dsekp/data/esp32-01",
                               as_string(device.data(reading(i), unix_ms_now(), Encoding::json))));
    ASSERT_TRUE(wait_until(
        [&] {
          return line_count(dir_.file("logs/server_logs_dsekp.csv")) >
                 std::max<std::size_t>(before, 1);
        },
        std::chrono::seconds(10)))
        << dsekp::test::read_file(err_file_);
  }
  /// The downlinks the device received so far, opened (each once: a second open is a replay),
  /// in order.
  std::vector<std::string> opened(dsekp::test::MqttTestClient& client, ScriptedDevice& device) {
    const auto& received = client.received();
    for (; looked_at_ < received.size(); ++looked_at_) {
      if (received[looked_at_].topic != "dsekp/down/esp32-01") continue;
      std::string text;
      EXPECT_EQ(device.open_down(bytes_of(received[looked_at_].payload), text), Error::ok);
      opened_.push_back(text);
    }
    return opened_;
  }

  dsekp::test::TempDir dir_;
  std::string registry_path_ = dir_.file("registry.db");
  DeviceMaterial material_;
  std::unique_ptr<dsekp::test::MosquittoBroker> broker_;
  std::unique_ptr<dsekp::test::ChildProcess> edge_;
  std::string err_file_;
  int starts_ = 0;
  std::size_t looked_at_ = 0;  // opened(): the messages already looked at
  std::vector<std::string> opened_;
};

// The finding: `dsekp edge send` answered "ok":true for a frame the broker dropped, because the
// device was offline (its clean session kept nothing). Now the edge holds it until the device
// is back.
TEST_F(HeldDownlinkTest, AnOfflineDevicesDownlinkIsQueuedThenSentAtItsNextFrame) {
  start_edge();
  dsekp::test::MqttTestClient device_client("esp32-01");
  ScriptedDevice device(material_, 11);
  bring_up(device_client, device);
  // A restarted edge has not heard from the device: offline until its next frame.
  stop_edge();
  start_edge();
  dsekp::test::MqttTestClient watcher("watcher");
  ASSERT_EQ(watcher.connect(broker_->port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(watcher.subscribe("dsekp/admin/result/held-1"), std::optional<int>(1));
  const Sent queued = send("esp32-01", "relay on", {"--request-id", "held-1", "--timeout", "1"});
  EXPECT_EQ(queued.exit_code, 75) << queued.err;
  ASSERT_EQ(queued.results.size(), 1u) << queued.err;
  EXPECT_EQ(queued.results[0].value("status", ""), "queued");
  EXPECT_EQ(queued.results[0].value("ok", true), false);
  EXPECT_NE(queued.err.find("offline"), std::string::npos) << queued.err;
  EXPECT_TRUE(opened(device_client, device).empty()) << "nothing sealed or sent yet";
  // The same request again (a redelivery, or the operator retrying): still one held copy.
  EXPECT_EQ(send("esp32-01", "relay on", {"--request-id", "held-1", "--timeout", "1"}).exit_code,
            75);

  send_reading(device_client, device, 1);
  ASSERT_TRUE(device_client.wait_for_count(2)) << dsekp::test::read_file(err_file_);
  EXPECT_EQ(opened(device_client, device), std::vector<std::string>{"relay on"});
  ASSERT_TRUE(watcher.wait_for_count(3));
  const auto sent = nlohmann::json::parse(watcher.received().back().payload);
  EXPECT_EQ(sent.value("status", ""), "sent") << sent;
  EXPECT_TRUE(sent.value("ok", false));
  EXPECT_TRUE(sent.contains("seq"));
  // Now online: sent at once, exit 0.
  const Sent now = send("esp32-01", "relay off");
  EXPECT_EQ(now.exit_code, 0) << now.err;
  ASSERT_EQ(now.results.size(), 1u);
  EXPECT_EQ(now.results[0].value("status", ""), "sent");
  ASSERT_TRUE(device_client.wait_for_count(3));
  EXPECT_EQ(opened(device_client, device), (std::vector<std::string>{"relay on", "relay off"}));
  EXPECT_FALSE(device_client.wait_for_count(4)) << "each request sent once";
  stop_edge();
}

TEST_F(HeldDownlinkTest, AHeldDownlinkExpiresAndAnUnknownDeviceOrAFullShareIsRefused) {
  start_edge({"--downlink-queue-ttl", "1"});
  const Sent expired = send("esp32-01", "too late", {"--timeout", "5"});
  EXPECT_EQ(expired.exit_code, 1) << expired.err;
  ASSERT_EQ(expired.results.size(), 2u) << expired.err;
  EXPECT_EQ(expired.results[0].value("status", ""), "queued");
  EXPECT_EQ(expired.results[1].value("status", ""), "expired");

  const Sent unknown = send("nobody", "x", {"--timeout", "1"});
  EXPECT_EQ(unknown.exit_code, 1);
  ASSERT_EQ(unknown.results.size(), 1u);
  EXPECT_EQ(unknown.results[0].value("reason", ""), "unknown_device") << "refused, not held";
  stop_edge();

  start_edge({"--downlink-queue-ttl", "600"});
  for (std::size_t i = 0; i < admin::kMaxQueuedPerDevice; ++i)
    ASSERT_EQ(send("esp32-01", "cmd " + std::to_string(i), {"--timeout", "0.3"}).exit_code, 75);
  const Sent full = send("esp32-01", "one too many", {"--timeout", "1"});
  EXPECT_EQ(full.exit_code, 1);
  ASSERT_EQ(full.results.size(), 1u);
  EXPECT_EQ(full.results[0].value("reason", ""), "queue_full");
  // The device comes back: every held one goes out, in order, none twice.
  dsekp::test::MqttTestClient device_client("esp32-01");
  ScriptedDevice device(material_, 12);
  bring_up(device_client, device);
  ASSERT_TRUE(device_client.wait_for_count(1 + admin::kMaxQueuedPerDevice));
  const auto got = opened(device_client, device);
  ASSERT_EQ(got.size(), admin::kMaxQueuedPerDevice);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], "cmd " + std::to_string(i));
  stop_edge();
}

// Other clients (Node-RED, a fleet tool) use MQTT 5 request/response: the results come on the
// response topic they chose, each with their correlation data; a response topic outside the
// result topics (here a device's downlink topic, which the edge may write) is refused there
// instead of being published on.
TEST_F(HeldDownlinkTest, AnMqtt5ClientGetsItsResultsOnItsResponseTopicWithItsCorrelationData) {
  start_edge();
  const std::string response = "dsekp/admin/result/node-red/inbox";
  Mqtt5Requester requester(broker_->port(), response);
  ASSERT_TRUE(requester.subscribe(response));
  dsekp::test::MqttTestClient device_client("esp32-01");
  ASSERT_EQ(device_client.connect(broker_->port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(device_client.subscribe("dsekp/down/esp32-01"), std::optional<int>(1));

  std::unique_ptr<DeviceRegistry> registry;
  ASSERT_TRUE(DeviceRegistry::open(registry_path_, OpenMode::existing_only, registry).ok());
  admin::AdminKey key{};
  ASSERT_TRUE(registry->admin_key(key).ok());
  admin::DownlinkRequest request{"nr-1", "esp32-01", {'o', 'n'}};
  admin::sign(key, "", request, unix_ms_now());
  ASSERT_TRUE(requester.request(admin::encode(request), response, "corr-42"));
  ASSERT_TRUE(requester.wait_for(1)) << dsekp::test::read_file(err_file_);
  auto answers = requester.answers();
  EXPECT_EQ(answers[0].correlation, "corr-42");
  EXPECT_EQ(nlohmann::json::parse(answers[0].json).value("status", ""), "queued");

  // A response topic the edge must not publish on: refused, answered on the default topic.
  dsekp::test::MqttTestClient watcher("watcher");
  ASSERT_EQ(watcher.connect(broker_->port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(watcher.subscribe("dsekp/admin/result/nr-2"), std::optional<int>(1));
  admin::DownlinkRequest hijack{"nr-2", "esp32-01", {'x'}};
  admin::sign(key, "", hijack, unix_ms_now());
  ASSERT_TRUE(requester.request(admin::encode(hijack), "dsekp/down/esp32-01", "c"));
  const auto refused = watcher.wait_for_message("dsekp/admin/result/nr-2");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(nlohmann::json::parse(refused->payload).value("reason", ""), "bad_response_topic");
  EXPECT_FALSE(device_client.received_on("dsekp/down/esp32-01")) << "nothing on the device's topic";
  secure_wipe(key);
  stop_edge();
}

}  // namespace
}  // namespace dsekp::edge::testing
