// The built-in MQTT 5 client (edge/mqtt_builtin/builtin_mqtt_client.hpp) keeps the transport
// contract on a real Mosquitto: bursts end before their PUBACKs, the session outlives the client,
// answers go out, oversized publishes never reach it; and against a fake broker on loopback that
// sends what no broker should, it refuses by rule and never buffers a packet over its limit.
#include "edge/mqtt_builtin/builtin_mqtt_client.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "edge/mqtt_builtin/mqtt5_packets.hpp"
#include "tests/support/loopback_port.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

using dsekp::ByteView;
using dsekp::edge::mqtt::MqttOptions;
using dsekp::edge::mqtt_builtin::BuiltinMqttClient;
using dsekp::edge::transport::BurstWait;
using dsekp::edge::transport::MessageProperties;
using dsekp::edge::transport::TransportHandlers;
using namespace std::chrono_literals;

template <typename Done>
bool eventually(Done done, std::chrono::milliseconds timeout = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

// What the handlers saw, in order: "m:<topic>:<payload>" per message, "end" per burst end.
struct Recorder {
  std::mutex mutex;
  std::vector<std::string> events;
  std::atomic<int> ready{0};
  std::atomic<int> messages{0};

  TransportHandlers handlers(std::function<void(const std::string&)> on_message = {}) {
    TransportHandlers h;
    h.message = [this, on_message](std::string_view topic, ByteView payload,
                                   const MessageProperties&) {
      const std::string text(payload.begin(), payload.end());
      {
        std::lock_guard lock(mutex);
        events.push_back("m:" + std::string(topic) + ":" + text);
      }
      ++messages;
      if (on_message) on_message(text);
      return BurstWait::may_wait;
    };
    h.ready = [this] { ++ready; };
    h.burst_end = [this] {
      std::lock_guard lock(mutex);
      events.push_back("end");
    };
    return h;
  }
  std::vector<std::string> payloads() {
    std::lock_guard lock(mutex);
    std::vector<std::string> out;
    for (const auto& e : events)
      if (e.rfind("m:", 0) == 0) out.push_back(e.substr(e.rfind(':') + 1));
    return out;
  }
};

MqttOptions options_for(int port, const std::string& client_id) {
  MqttOptions o;
  o.port = static_cast<std::uint16_t>(port);
  o.client_id = client_id;
  o.subscriptions = {"in/#"};
  o.batch_max = 4;
  o.maximum_packet_size = 8192;
  return o;
}

// Connects `client_id` once and stops: the broker keeps its session and queues for it from then.
::testing::AssertionResult create_session(int port, const std::string& client_id) {
  Recorder seen;
  BuiltinMqttClient client(options_for(port, client_id));
  std::string error;
  if (!client.start(seen.handlers(), error)) return ::testing::AssertionFailure() << error;
  const bool ready = eventually([&] { return seen.ready == 1; });
  client.stop();
  return ready ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "no SUBACK";
}

class BuiltinMqttClientTest : public ::testing::Test {
 protected:
  BuiltinMqttClientTest()
      : broker_(broker_dir(), "allow_anonymous true\nmax_queued_messages 1000\n") {}
  static std::string broker_dir() {
    static dsekp::test::TempDir dir;
    const std::string path = dir.file("broker-" + std::to_string(++count_));
    std::filesystem::create_directories(path);
    return path;
  }
  static inline int count_ = 0;
  dsekp::test::MosquittoBroker broker_;
};

TEST_F(BuiltinMqttClientTest, MessagesArriveInBurstsOfAtMostBatchMaxAndAnswersGoOut) {
  Recorder seen;
  BuiltinMqttClient client(options_for(broker_.port(), "edge-a"));
  // Every message is answered on out/<payload>, as the daemon answers an INIT with its ACK.
  TransportHandlers h = seen.handlers(
      [&client](const std::string& text) { client.publish("out/" + text, ByteView{}); });
  std::string error;
  ASSERT_TRUE(client.start(h, error)) << error;
  ASSERT_TRUE(eventually([&] { return seen.ready == 1; }));
  EXPECT_TRUE(client.connected());

  dsekp::test::MqttTestClient device("device");
  ASSERT_EQ(device.connect(broker_.port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(device.subscribe("out/#"), std::optional<int>(1));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(device.publish("in/x", std::to_string(i)));
  ASSERT_TRUE(eventually([&] { return seen.messages == 10; }));
  EXPECT_TRUE(device.wait_for_count(10));
  EXPECT_EQ(seen.payloads(),
            (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  // No burst holds more than batch_max (4) messages, and every message is in a burst that ended.
  std::lock_guard lock(seen.mutex);
  int run = 0;
  for (const auto& e : seen.events) {
    run = e == "end" ? 0 : run + 1;
    EXPECT_LE(run, 4);
  }
  EXPECT_EQ(seen.events.back(), "end");
}

TEST_F(BuiltinMqttClientTest, TheSessionKeepsWhatCameWhileTheClientWasAwayAndNothingTwice) {
  ASSERT_TRUE(create_session(broker_.port(), "edge-b"));
  dsekp::test::MqttTestClient device("device");
  ASSERT_EQ(device.connect(broker_.port(), "", ""), std::optional<int>(0));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(device.publish("in/y", "q" + std::to_string(i)));

  Recorder second;
  BuiltinMqttClient client(options_for(broker_.port(), "edge-b"));
  std::string error;
  ASSERT_TRUE(client.start(second.handlers(), error)) << error;
  ASSERT_TRUE(eventually([&] { return second.messages == 5; }));
  // Acknowledged after their bursts: a third connection of the same session gets none again.
  client.stop();
  Recorder third;
  BuiltinMqttClient again(options_for(broker_.port(), "edge-b"));
  ASSERT_TRUE(again.start(third.handlers(), error)) << error;
  ASSERT_TRUE(eventually([&] { return third.ready == 1; }));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(third.messages, 0);
  EXPECT_EQ(second.payloads(), (std::vector<std::string>{"q0", "q1", "q2", "q3", "q4"}));
}

// Messages that arrive in one read still end their burst at batch_time: a slow handler (20 ms
// a message, batch_time 10 ms) gets each of five queued messages in a burst of its own.
TEST_F(BuiltinMqttClientTest, ABurstEndsAtBatchTimeAlsoInsideOneRead) {
  ASSERT_TRUE(create_session(broker_.port(), "edge-d"));
  dsekp::test::MqttTestClient device("device");
  ASSERT_EQ(device.connect(broker_.port(), "", ""), std::optional<int>(0));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(device.publish("in/z", std::to_string(i)));
  Recorder seen;
  MqttOptions o = options_for(broker_.port(), "edge-d");
  o.batch_time = 10ms;
  BuiltinMqttClient client(o);
  std::string error;
  ASSERT_TRUE(client.start(
      seen.handlers([](const std::string&) { std::this_thread::sleep_for(20ms); }), error))
      << error;
  ASSERT_TRUE(eventually([&] { return seen.messages == 5; }));
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(seen.mutex);
    return seen.events.size() == 10;
  }));
  std::lock_guard lock(seen.mutex);
  for (std::size_t i = 0; i < seen.events.size(); ++i)
    EXPECT_EQ(seen.events[i] == "end", i % 2 == 1) << i << ": " << seen.events[i];
}

TEST_F(BuiltinMqttClientTest, APublishOverTheAnnouncedSizeNeverArrivesAndTheNextOneDoes) {
  Recorder seen;
  BuiltinMqttClient client(options_for(broker_.port(), "edge-c"));
  std::string error;
  ASSERT_TRUE(client.start(seen.handlers(), error)) << error;
  ASSERT_TRUE(eventually([&] { return seen.ready == 1; }));
  dsekp::test::MqttTestClient device("device");
  ASSERT_EQ(device.connect(broker_.port(), "", ""), std::optional<int>(0));
  ASSERT_TRUE(device.publish("in/big", std::string(300'000, 'b')));
  ASSERT_TRUE(device.publish("in/small", "after"));
  ASSERT_TRUE(eventually([&] { return seen.messages == 1; }));
  EXPECT_EQ(seen.payloads(), (std::vector<std::string>{"after"}));
  EXPECT_TRUE(client.connected());
}

TEST(BuiltinMqttClientStart, RefusesTlsAndMqtt311ByName) {
  Recorder seen;
  std::string error;
  // Any TLS setting, not only a CA: a client key alone or "insecure" alone must not end in a
  // connection in clear.
  const auto with_tls = [](const auto& set) {
    MqttOptions o = options_for(1, "x");
    set(o.tls);
    return o;
  };
  for (const MqttOptions& tls :
       {with_tls([](auto& t) { t.ca_file = "/etc/ssl/certs/ca-certificates.crt"; }),
        with_tls([](auto& t) { t.cert_file = "client.crt"; }),
        with_tls([](auto& t) { t.key_file = "client.key"; }),
        with_tls([](auto& t) { t.insecure = true; })}) {
    BuiltinMqttClient a(tls);
    error.clear();
    EXPECT_FALSE(a.start(seen.handlers(), error));
    EXPECT_NE(error.find("no TLS"), std::string::npos) << error;
  }
  MqttOptions v311 = options_for(1, "x");
  v311.version = dsekp::edge::mqtt::MqttVersion::v311;
  BuiltinMqttClient b(v311);
  EXPECT_FALSE(b.start(seen.handlers(), error));
  EXPECT_NE(error.find("MQTT 5 only"), std::string::npos) << error;
}

// A fake broker on loopback: accepts one connection at a time, reads the CONNECT, answers with
// the script of that connection (the last script for every later one: a CONNACK and whatever
// follows), records what the client sends on each connection, and then either waits for the
// client to close or, with `close_after`, closes the connection itself.
struct FakeSession {
  std::vector<std::uint8_t> script;
  bool close_after = false;
};

class FakeBroker {
 public:
  explicit FakeBroker(std::vector<std::uint8_t> script)
      : FakeBroker(std::vector<FakeSession>{{std::move(script), false}}) {}
  explicit FakeBroker(std::vector<FakeSession> sessions) : sessions_(std::move(sessions)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a = dsekp::test::loopback_address(0);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listener_, 4);
    socklen_t size = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &size);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeBroker() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }
  [[nodiscard]] int port() const { return port_; }
  std::atomic<int> connections{0};
  std::atomic<int> closed_by_client{0};
  /// What the client sent after its CONNECT on connection `index` (0: the first).
  std::vector<std::uint8_t> received(std::size_t index) {
    std::lock_guard lock(mutex_);
    return index < received_.size() ? received_[index] : std::vector<std::uint8_t>{};
  }
  /// The last bytes the client sent before it closed its first connection.
  std::vector<std::uint8_t> first_connection_tail(std::size_t n) {
    const std::vector<std::uint8_t> all = received(0);
    return {all.end() - static_cast<std::ptrdiff_t>(std::min(n, all.size())), all.end()};
  }

 private:
  void serve() {
    while (!stopping_) {
      const int c = ::accept(listener_, nullptr, nullptr);
      if (c < 0) return;
      const std::size_t index = static_cast<std::size_t>(connections++);
      const FakeSession& session = sessions_[std::min(index, sessions_.size() - 1)];
      {
        std::lock_guard lock(mutex_);
        received_.resize(index + 1);
      }
      std::uint8_t buf[4096];
      (void)::read(c, buf, sizeof buf);  // the CONNECT
      (void)::write(c, session.script.data(), session.script.size());
      // Read until the client closes (or, with close_after, for what it sends in 300 ms).
      const auto until = std::chrono::steady_clock::now() + 300ms;
      for (;;) {
        if (session.close_after) {
          pollfd p{c, POLLIN, 0};
          const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
              until - std::chrono::steady_clock::now());
          if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
        }
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) {
          ++closed_by_client;
          break;
        }
        std::lock_guard lock(mutex_);
        received_[index].insert(received_[index].end(), buf, buf + n);
      }
      ::close(c);
    }
  }
  std::vector<FakeSession> sessions_;
  std::mutex mutex_;
  std::vector<std::vector<std::uint8_t>> received_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

bool contains(const std::vector<std::uint8_t>& bytes, const std::vector<std::uint8_t>& part) {
  return std::search(bytes.begin(), bytes.end(), part.begin(), part.end()) != bytes.end();
}

const std::vector<std::uint8_t> kConnackAccepted = {0x20, 3, 0, 0, 0};

// The client ends the connection after `follow` (and reconnects), handing nothing over; with a
// `disconnect_reason`, its last packet is a DISCONNECT with that reason.
void refused_and_reconnected(std::vector<std::uint8_t> follow, std::uint8_t disconnect_reason) {
  std::vector<std::uint8_t> script = kConnackAccepted;
  script.insert(script.end(), follow.begin(), follow.end());
  FakeBroker fake(script);
  Recorder seen;
  MqttOptions o = options_for(fake.port(), "edge-f");
  o.reconnect_min_s = 1;
  BuiltinMqttClient client(o);
  std::string error;
  ASSERT_TRUE(client.start(seen.handlers(), error)) << error;
  EXPECT_TRUE(eventually([&] { return fake.closed_by_client >= 1; }));
  EXPECT_TRUE(eventually([&] { return fake.connections >= 2; }, 4000ms));  // it came back
  EXPECT_EQ(seen.messages, 0);
  client.stop();
  if (disconnect_reason != 0) {
    EXPECT_EQ(fake.first_connection_tail(3),
              (std::vector<std::uint8_t>{0xe0, 1, disconnect_reason}));
  }
}

TEST(BuiltinMqttClientHostile, APacketClaimingMoreThanTheLimitIsRefusedFromItsHeader) {
  // A PUBLISH that claims 268 MB and then sends nothing: the client must not wait for (or
  // allocate) it; it answers DISCONNECT "packet too large" (0xE0 ...) and closes.
  refused_and_reconnected({0x32, 0xff, 0xff, 0xff, 0x7f}, 0x95);
}

TEST(BuiltinMqttClientHostile, ATopicAliasAQos2PublishAndAMalformedLengthEndTheConnection) {
  refused_and_reconnected({0x32, 9, 0, 1, 't', 0, 1, 3, 0x23, 0, 1}, 0x81);
  refused_and_reconnected({0x34, 6, 0, 1, 't', 0, 1, 0}, 0x82);
  refused_and_reconnected({0x30, 0xff, 0xff, 0xff, 0xff, 0x01}, 0x81);
}

TEST(BuiltinMqttClientHostile, APacketABrokerNeverSendsEndsTheConnection) {
  refused_and_reconnected({0x10, 0}, 0);           // a CONNECT from the broker
  refused_and_reconnected({0x20, 3, 0, 0, 0}, 0);  // a second CONNACK
  refused_and_reconnected({0xe0, 1, 0x8e}, 0);     // DISCONNECT: session taken over
}

// The contract the edge's exactly-once rests on, at the socket: a QoS 1 message's PUBACK is not
// written while the burst's end (the daemon's commit) runs, only after it has returned.
TEST(BuiltinMqttClientContract, NoPubackLeavesBeforeTheBurstEndHasReturned) {
  // CONNACK, the SUBACK of the client's first packet id, one QoS 1 PUBLISH with id 7.
  const std::vector<std::uint8_t> puback = {0x40, 2, 0, 7};
  FakeBroker fake(
      {0x20, 3, 0, 0, 0, 0x90, 4, 0, 1, 0, 1, 0x32, 10, 0, 4, 'i', 'n', '/', 'x', 0, 7, 0, 'p'});
  std::atomic<bool> early{false};
  std::atomic<bool> ended{false};
  TransportHandlers h;
  h.message = [](std::string_view, ByteView, const MessageProperties&) {
    return BurstWait::may_wait;
  };
  h.burst_end = [&] {
    std::this_thread::sleep_for(300ms);  // time for any early PUBACK to reach the fake broker
    early = contains(fake.received(0), puback);
    ended = true;
  };
  BuiltinMqttClient client(options_for(fake.port(), "edge-g"));
  std::string error;
  ASSERT_TRUE(client.start(h, error)) << error;
  ASSERT_TRUE(eventually([&] { return ended.load(); }));
  EXPECT_FALSE(early.load());
  EXPECT_TRUE(eventually([&] { return contains(fake.received(0), puback); }));
  client.stop();
}

// A publish the broker has not acknowledged when the connection drops goes again first on the
// next one: with its packet id and DUP when the broker kept the session.
TEST(BuiltinMqttClientContract, AnUnacknowledgedPublishGoesAgainWithDupWhenTheSessionIsKept) {
  // First connection: accepted, then closed by the broker (no PUBACK for our publish); the
  // second: accepted with the session present, kept open.
  FakeBroker fake({FakeSession{{0x20, 3, 0, 0, 0}, true}, FakeSession{{0x20, 3, 1, 0, 0}, false}});
  MqttOptions o = options_for(fake.port(), "edge-h");
  o.subscriptions.clear();
  o.reconnect_min_s = 1;
  BuiltinMqttClient client(o);
  Recorder seen;
  std::string error;
  ASSERT_TRUE(client.start(seen.handlers(), error)) << error;
  ASSERT_TRUE(client.publish("out/a", ByteView{}));
  ASSERT_TRUE(eventually([&] { return fake.connections >= 2; }, 4000ms));
  // PUBLISH, QoS 1 (0x32), topic "out/a", packet id 1: first without DUP, then with it (0x3a).
  const std::vector<std::uint8_t> first = {0x32, 10, 0, 5, 'o', 'u', 't', '/', 'a', 0, 1, 0};
  std::vector<std::uint8_t> again = first;
  again[0] = 0x3a;
  EXPECT_TRUE(eventually([&] { return contains(fake.received(1), again); }))
      << "first connection got it: " << contains(fake.received(0), first);
  EXPECT_TRUE(contains(fake.received(0), first));
  client.stop();
}

// A CONNACK whose header claims more than the client takes ends the attempt at once (it is not
// buffered), and so does a first packet that is not a CONNACK.
TEST(BuiltinMqttClientHostile, AnOversizedOrMissingConnackEndsTheAttemptAtOnce) {
  for (const std::vector<std::uint8_t>& answer :
       {std::vector<std::uint8_t>{0x20, 0xff, 0xff, 0xff, 0x7f},
        std::vector<std::uint8_t>{0x30, 3, 0, 1, 't'}}) {
    FakeBroker fake(answer);
    Recorder seen;
    MqttOptions o = options_for(fake.port(), "edge-i");
    BuiltinMqttClient client(o);
    std::string error;
    ASSERT_TRUE(client.start(seen.handlers(), error)) << error;
    // Well before the 10 s the client waits for a CONNACK that does not come.
    EXPECT_TRUE(eventually([&] { return fake.closed_by_client >= 1; }, 2000ms));
    EXPECT_FALSE(client.connected());
    client.stop();
  }
}

// stop() from a handler (the loop thread) only asks the loop to end; the owner's stop() and the
// destructor then join it.
TEST_F(BuiltinMqttClientTest, StopFromAHandlerThenFromTheOwnerEndsTheLoopOnce) {
  std::atomic<int> messages{0};
  std::atomic<int> ends_after_stop{0};
  std::atomic<bool> stopped{false};
  auto client = std::make_unique<BuiltinMqttClient>(options_for(broker_.port(), "edge-k"));
  TransportHandlers h;
  std::atomic<bool> ready{false};
  h.ready = [&] { ready = true; };
  h.message = [&](std::string_view, ByteView, const MessageProperties&) {
    ++messages;
    client->stop();
    stopped = true;
    return BurstWait::may_wait;
  };
  h.burst_end = [&] {
    if (stopped) ++ends_after_stop;
  };
  std::string error;
  ASSERT_TRUE(client->start(h, error)) << error;
  ASSERT_TRUE(eventually([&] { return ready.load(); }));
  dsekp::test::MqttTestClient device("device");
  ASSERT_EQ(device.connect(broker_.port(), "", ""), std::optional<int>(0));
  ASSERT_TRUE(device.publish("in/s", "1"));
  ASSERT_TRUE(eventually([&] { return stopped.load(); }));
  EXPECT_TRUE(eventually([&] { return !client->connected(); }));
  client->stop();                 // joins the loop
  EXPECT_EQ(ends_after_stop, 1);  // the burst the handler was in still ended (its commit)
  client.reset();
  EXPECT_EQ(messages, 1);
}

// A message handler that throws ends the process at once with status 70 and the reason on stderr
// (the daemon's fail-stop: nothing of the burst is acknowledged).
TEST(BuiltinMqttClientContract, AHandlerThatThrowsEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        FakeBroker fake({0x20, 3, 0, 0,   0,   0x90, 4,   0, 1, 0, 1,  0x32,
                         10,   0, 4, 'i', 'n', '/',  'x', 0, 7, 0, 'p'});
        TransportHandlers h;
        h.message = [](std::string_view, ByteView, const MessageProperties&) -> BurstWait {
          throw std::runtime_error("boom");
        };
        BuiltinMqttClient client(options_for(fake.port(), "edge-j"));
        std::string error;
        if (client.start(h, error)) std::this_thread::sleep_for(5s);
      },
      ::testing::ExitedWithCode(70), "FATAL: exception in the MQTT message handler: boom");
}

}  // namespace
