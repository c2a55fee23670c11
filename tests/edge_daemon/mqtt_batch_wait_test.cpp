// The MQTT transport's batch wait (MqttOptions::batch_wait): a burst that owes no answer stays
// open for messages that come within the wait (up to kBatchWaitMessages), and one that owes an
// answer ends as soon as the messages already received are in; the wait never outlasts the
// batch time, ends when another thread publishes, and is off over MQTT 3.1.1. Against a real
// Mosquitto; the gaps between publishes are a second, a fifth of the wait, so the assertions are
// on the order of events, not on timings.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "edge/mqtt/mqtt_client.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::mqtt {
namespace {

constexpr const char* kTopic = "dsekp/wait";
constexpr const char* kEnd = "|";  // a burst's end in the recorded events

class BatchWaitTest : public ::testing::Test {
 protected:
  /// Starts a client with `wait`; a message whose payload starts with "answer" owes an answer.
  void start(std::chrono::milliseconds wait,
             std::chrono::milliseconds batch_time = std::chrono::milliseconds(20'000),
             MqttVersion version = MqttVersion::automatic) {
    MqttOptions o;
    o.port = static_cast<std::uint16_t>(broker_.port());
    o.client_id = "batch-wait-test";
    o.subscriptions = {kTopic};
    o.batch_max = 256;
    o.batch_time = batch_time;
    o.batch_wait = wait;
    o.version = version;
    client_ = std::make_unique<MqttClient>(o);
    transport::TransportHandlers h;
    h.message = [this](std::string_view, ByteView payload, const transport::MessageProperties&) {
      const std::string text(payload.begin(), payload.end());
      record(text);
      return text.rfind("answer", 0) == 0 ? transport::BurstWait::answer_pending
                                          : transport::BurstWait::may_wait;
    };
    h.ready = [this] { record("ready"); };
    h.burst_end = [this] { record(kEnd); };
    std::string error;
    ASSERT_TRUE(client_->start(std::move(h), error)) << error;
    ASSERT_TRUE(wait_for([&] { return count("ready") == 1; })) << "no SUBACK";
    ASSERT_EQ(publisher_.connect(broker_.port(), "", ""), 0);
  }
  void publish(const std::string& payload) { ASSERT_TRUE(publisher_.publish(kTopic, payload)); }
  MqttClient& client() { return *client_; }
  /// The events after "ready", once `ends` bursts have ended.
  std::vector<std::string> events_after(std::size_t ends) {
    EXPECT_TRUE(wait_for([&] { return count(kEnd) >= ends; })) << "bursts did not end";
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const std::string& e : events_)
      if (e != "ready") out.push_back(e);
    return out;
  }
  void TearDown() override {
    if (client_) client_->stop();
  }

 private:
  void record(const std::string& event) {
    std::lock_guard lock(mutex_);
    events_.push_back(event);
  }
  std::size_t count(const std::string& event) {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(std::count(events_.begin(), events_.end(), event));
  }
  template <typename Done>
  static bool wait_for(Done done) {
    for (int i = 0; i < 2000 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done();
  }

  test::TempDir dir_;
  test::MosquittoBroker broker_{dir_.path().string(), "allow_anonymous true\n"};
  test::MqttTestClient publisher_{"batch-wait-publisher"};
  std::unique_ptr<MqttClient> client_;
  std::mutex mutex_;
  std::vector<std::string> events_;
};

constexpr std::chrono::milliseconds kWait{5'000};
constexpr std::chrono::milliseconds kGap{1'000};

TEST_F(BatchWaitTest, WithoutAWaitEachLoneMessageIsABurst) {
  start(std::chrono::milliseconds(0));
  publish("a");
  std::this_thread::sleep_for(kGap);
  publish("b");
  EXPECT_EQ(events_after(2), (std::vector<std::string>{"a", kEnd, "b", kEnd}));
}

TEST_F(BatchWaitTest, AMessageWithinTheWaitJoinsTheOpenBurst) {
  start(kWait);
  publish("a");
  std::this_thread::sleep_for(kGap);
  publish("b");
  EXPECT_EQ(events_after(1), (std::vector<std::string>{"a", "b", kEnd}));
}

// A broker sends no more than its in-flight window of unacknowledged messages: a burst that may
// have filled it stops waiting (else a device flooding a small window would hold everyone's
// PUBACKs and ACKs back for the whole wait).
TEST_F(BatchWaitTest, ABurstStopsWaitingOnceItHoldsTenMessages) {
  start(kWait);
  std::vector<std::string> expected;
  for (std::size_t i = 0; i < kBatchWaitMessages; ++i) {
    publish("m" + std::to_string(i));
    expected.push_back("m" + std::to_string(i));
  }
  std::this_thread::sleep_for(kGap);
  publish("b");
  expected.insert(expected.end(), {kEnd, "b", kEnd});
  EXPECT_EQ(events_after(2), expected);
}

// batch_time bounds every burst, its wait included.
TEST_F(BatchWaitTest, TheWaitNeverOutlastsTheBatchTime) {
  start(kWait, std::chrono::milliseconds(50));
  publish("a");
  std::this_thread::sleep_for(kGap);
  publish("b");
  EXPECT_EQ(events_after(2), (std::vector<std::string>{"a", kEnd, "b", kEnd}));
}

// A publish from another thread (an admin answer, the daemon's own messages) wakes the loop:
// the burst ends then instead of holding the publish back for the rest of the wait.
TEST_F(BatchWaitTest, APublishFromAnotherThreadEndsTheWait) {
  start(kWait);
  publish("a");
  std::this_thread::sleep_for(kGap / 4);
  const std::uint8_t byte = 1;
  ASSERT_TRUE(client().publish("dsekp/elsewhere", ByteView(&byte, 1)));
  std::this_thread::sleep_for(kGap);
  publish("b");
  EXPECT_EQ(events_after(2), (std::vector<std::string>{"a", kEnd, "b", kEnd}));
}

// Over MQTT 3.1.1 the broker's in-flight window is its own setting, unknown here: no wait.
TEST_F(BatchWaitTest, AnMqtt311ConnectionNeverWaits) {
  start(kWait, std::chrono::milliseconds(20'000), MqttVersion::v311);
  publish("a");
  std::this_thread::sleep_for(kGap);
  publish("b");
  EXPECT_EQ(events_after(2), (std::vector<std::string>{"a", kEnd, "b", kEnd}));
}

TEST_F(BatchWaitTest, ABurstThatOwesAnAnswerDoesNotWait) {
  start(kWait);
  publish("answer-1");
  std::this_thread::sleep_for(kGap);
  publish("b");
  EXPECT_EQ(events_after(2), (std::vector<std::string>{"answer-1", kEnd, "b", kEnd}));
}

}  // namespace
}  // namespace dsekp::edge::mqtt
