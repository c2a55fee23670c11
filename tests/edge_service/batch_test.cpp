// Batches (edge_service.hpp, message_batch.hpp): many messages in one store transaction, a
// savepoint each. A message that fails is undone alone; the kept ones commit together and only
// then reach the sinks' side effects and the publishes; a failed batch commit is retried message
// by message; a message that cannot be stored ends in fail_stop, never in a silent loss.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "edge/service/message_batch.hpp"
#include "edge/sinks/composite_sink.hpp"
#include "edge/sinks/server_csv_sink.hpp"
#include "edge/sinks/sqlite_telemetry_sink.hpp"
#include "service_fixture.hpp"

namespace dsekp::edge::testing {
namespace {

struct FailStopped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class BatchTest : public EdgeServiceTest {
 protected:
  MessageBatchOptions options() {
    MessageBatchOptions o;
    o.pause = std::chrono::milliseconds(1);
    o.fail_stop = [this](const std::string& why) {
      fail_stops.push_back(why);
      throw FailStopped(why);
    };
    o.settled = [this](const SettledMessage& m) { outcomes.push_back(m.result); };
    return o;
  }
  MessageBatch make_batch() {
    return MessageBatch(
        *service_, [this](const Publish& p) { published.push_back(p); }, options());
  }

  std::vector<Publish> published;
  std::vector<std::string> fail_stops;
  std::vector<HandleResult> outcomes;  // each message's final result (settled)
};

TEST_F(BatchTest, AFailedMessageIsUndoneAloneAndTheOthersCommitTogether) {
  ScriptedDevice device(material_, 61);
  handshake(device, Encoding::json);
  const Bytes f0 = device.data(R"({"n":0})", kNowMs, Encoding::json);
  const Bytes f1 = device.data(R"({"n":1})", kNowMs, Encoding::json);
  const Bytes f2 = device.data(R"({"n":2})", kNowMs, Encoding::compact);

  ASSERT_TRUE(service_->begin_batch().ok());
  EXPECT_TRUE(deliver(kDataTopic, f0).ok());
  sink_.fail = true;
  EXPECT_EQ(deliver(kDataTopic, f1).reason, EdgeReason::sink_failure);
  sink_.fail = false;
  EXPECT_TRUE(deliver(kDataTopic, f2).ok());
  EXPECT_TRUE(sink_.rows.empty());  // nothing is final before the commit
  ASSERT_TRUE(service_->commit_batch().ok());

  ASSERT_EQ(sink_.rows.size(), 2u);
  const auto text = [](const AcceptedFrame& row) {
    return std::string(row.plaintext.begin(), row.plaintext.end());
  };
  EXPECT_EQ(text(sink_.rows[0]), R"({"n":0})");
  EXPECT_EQ(text(sink_.rows[1]), R"({"n":2})");
  EXPECT_EQ(sink_.table_rows(), 2);
  // The undone frame was not accepted: alone now, it is; the kept ones are replays.
  EXPECT_TRUE(deliver(kDataTopic, f1).ok());
  expect_rejected(deliver(kDataTopic, f0), "replay");
  expect_rejected(deliver(kDataTopic, f2), "replay");
  EXPECT_EQ(sink_.table_rows(), 3);
}

// The SQLite store's uplink fast path in a batch: a device's first frame takes the full path
// (its state read, checked, saved), the next ones only move the window in the batch's copy;
// a replay among them is refused, and one undone (its row refused) is accepted when it comes
// again, after the batch has committed the others' windows.
TEST_F(BatchTest, LaterFramesOfADeviceMoveOnlyItsWindowAndAnUndoneOneIsAcceptedAgain) {
  ScriptedDevice device(material_, 69);
  handshake(device, Encoding::json);
  std::vector<Bytes> frames;
  for (int i = 0; i < 4; ++i)
    frames.push_back(device.data("{\"n\":" + std::to_string(i) + "}", kNowMs, Encoding::json));

  ASSERT_TRUE(service_->begin_batch().ok());
  HandleResult r = deliver(kDataTopic, frames[0]);
  EXPECT_TRUE(r.ok()) << r.reason_name();
  EXPECT_EQ(r.cache_lookup, CacheLookup::miss);
  r = deliver(kDataTopic, frames[1]);
  EXPECT_TRUE(r.ok()) << r.reason_name();
  EXPECT_EQ(r.cache_lookup, CacheLookup::hit);
  r = deliver(kDataTopic, frames[1]);
  expect_rejected(r, "replay");
  EXPECT_EQ(r.cache_lookup, CacheLookup::hit);
  sink_.fail = true;
  r = deliver(kDataTopic, frames[2]);
  EXPECT_EQ(r.reason, EdgeReason::sink_failure);
  EXPECT_EQ(r.cache_lookup, CacheLookup::hit);
  sink_.fail = false;
  EXPECT_TRUE(deliver(kDataTopic, frames[3]).ok());
  ASSERT_TRUE(service_->commit_batch().ok());
  EXPECT_EQ(sink_.table_rows(), 3);

  EXPECT_TRUE(deliver(kDataTopic, frames[2]).ok()) << "the undone frame was not recorded";
  for (int i : {0, 1, 3}) expect_rejected(deliver(kDataTopic, frames[i]), "replay");
  EXPECT_EQ(sink_.table_rows(), 4);
}

// The real sinks in a batch: the telemetry table and the CSV log (with its journal) keep the
// rows of the kept messages, in order, and drop the undone one's, whose redelivery then lands
// after them.
TEST_F(BatchTest, TelemetryAndCsvDropAnUndoneMessageAndKeepTheOthersInOrder) {
  std::string error;
  auto telemetry = sinks::SqliteTelemetrySink::open(sqlite_->connection(), error);
  ASSERT_NE(telemetry, nullptr) << error;
  const std::string logs = dir_.file("logs");
  std::filesystem::create_directories(logs);
  sinks::ServerCsvSink csv(logs, sqlite_->connection());
  sinks::CompositeSink sinks;
  sinks.add(*telemetry);
  sinks.add(csv);
  sinks.add(sink_);  // last: its `fail` undoes a message after the others took its row
  EdgeService service(EdgeServiceParts{*registry_, *store_, *generations_, sinks, crypto_, rng_},
                      {});
  ScriptedDevice device(material_, 68);
  const HandleResult init = service.handle(
      kInitTopic, device.init(Encoding::json, static_cast<std::uint32_t>(kNowMs / 1000)), kNowMs);
  ASSERT_TRUE(init.ok()) << init.reason_name();
  ASSERT_EQ(device.take_ack(init.publishes.at(0).payload), Error::ok);
  std::vector<Bytes> frames;
  for (int i = 0; i < 4; ++i)
    frames.push_back(device.data("{\"n\":" + std::to_string(i) + "}", kNowMs, Encoding::json));

  ASSERT_TRUE(service.begin_batch().ok());
  EXPECT_TRUE(service.handle(kDataTopic, frames[0], kNowMs).ok());
  sink_.fail = true;
  EXPECT_EQ(service.handle(kDataTopic, frames[1], kNowMs).reason, EdgeReason::sink_failure);
  sink_.fail = false;
  EXPECT_TRUE(service.handle(kDataTopic, frames[2], kNowMs).ok());
  EXPECT_TRUE(service.handle(kDataTopic, frames[3], kNowMs).ok());
  ASSERT_TRUE(service.commit_batch().ok());
  EXPECT_TRUE(service.handle(kDataTopic, frames[1], kNowMs).ok());  // the redelivery, alone

  const auto readings = [&] {
    std::vector<std::string> out;
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(sqlite_->connection(), "SELECT plaintext FROM telemetry ORDER BY id", -1, &s,
                       nullptr);
    while (sqlite3_step(s) == SQLITE_ROW)
      out.emplace_back(static_cast<const char*>(sqlite3_column_blob(s, 0)),
                       static_cast<std::size_t>(sqlite3_column_bytes(s, 0)));
    sqlite3_finalize(s);
    return out;
  };
  const std::vector<std::string> want = {R"({"n":0})", R"({"n":2})", R"({"n":3})", R"({"n":1})"};
  EXPECT_EQ(readings(), want);
  std::ifstream file(logs + "/server_logs_dsekp.csv");
  std::stringstream text;
  text << file.rdbuf();
  std::vector<std::size_t> at;
  for (const std::string& w : want) {
    // The CSV quotes the reading; its n value is enough to find the line.
    at.push_back(text.str().find("n\"\":" + w.substr(5, 1)));
    EXPECT_NE(at.back(), std::string::npos) << w << " not in\n" << text.str();
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << text.str();
  std::size_t lines = 0;
  for (char c : text.str()) lines += c == '\n' ? 1 : 0;
  EXPECT_EQ(lines, 1 + want.size()) << text.str();  // the header and one line per frame
}

TEST_F(BatchTest, ARolledBackBatchLeavesNothing) {
  ScriptedDevice device(material_, 62);
  handshake(device, Encoding::json);
  const Bytes f0 = device.data(kReading, kNowMs, Encoding::json);
  ASSERT_TRUE(service_->begin_batch().ok());
  EXPECT_TRUE(deliver(kDataTopic, f0).ok());
  service_->rollback_batch();
  EXPECT_FALSE(service_->batch_open());
  EXPECT_TRUE(sink_.rows.empty());
  EXPECT_EQ(sink_.table_rows(), 0);
  EXPECT_TRUE(deliver(kDataTopic, f0).ok());  // accepted once, now
  EXPECT_EQ(sink_.table_rows(), 1);
}

TEST_F(BatchTest, AcksArePublishedOnlyAfterTheCommit) {
  MessageBatch batch = make_batch();
  ScriptedDevice device(material_, 63);
  batch.handle(kInitTopic, device.init(Encoding::json, static_cast<std::uint32_t>(kNowMs / 1000)),
               kNowMs, kNowMs * 1000);
  EXPECT_TRUE(published.empty());
  EXPECT_TRUE(outcomes.empty());  // nothing is final before the commit
  EXPECT_TRUE(service_->batch_open());
  batch.end();
  EXPECT_FALSE(service_->batch_open());
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].ok()) << outcomes[0].reason_name();
  ASSERT_EQ(published.size(), 1u);
  EXPECT_EQ(device.take_ack(published[0].payload), Error::ok);
}

// The transport may hold a burst open for more messages (MqttOptions::batch_wait) only while
// the batch owes nobody an answer: a DATA frame owes none, an INIT its ACK until the commit.
TEST_F(BatchTest, ABatchOwesAnAnswerFromAnInitUntilItsCommit) {
  MessageBatch batch = make_batch();
  ScriptedDevice device(material_, 65);
  handshake(device, Encoding::json);
  batch.handle(kDataTopic, device.data(R"({"n":0})", kNowMs, Encoding::json), kNowMs,
               kNowMs * 1000);
  EXPECT_FALSE(batch.has_answers());
  // The device opens its next session (an INIT newer than the first).
  batch.handle(kInitTopic,
               device.init(Encoding::json, static_cast<std::uint32_t>(kNowMs / 1000) + 1),
               kNowMs + 1000, (kNowMs + 1000) * 1000);
  EXPECT_TRUE(batch.has_answers());
  batch.end();
  EXPECT_FALSE(batch.has_answers());
  ASSERT_EQ(published.size(), 1u);

  // An INIT whose save fails in the batch is handled again alone, and its ACK published at
  // once: the burst still owes it, until its end.
  store_->fail_next_saves = 1;
  batch.handle(kInitTopic,
               device.init(Encoding::json, static_cast<std::uint32_t>(kNowMs / 1000) + 2),
               kNowMs + 2000, (kNowMs + 2000) * 1000);
  ASSERT_EQ(published.size(), 2u) << "the INIT was not answered alone";
  EXPECT_TRUE(batch.has_answers());
  batch.end();
  EXPECT_FALSE(batch.has_answers());

  // A commit that fails has its messages handled again one by one inside end(), which publishes
  // their answers itself: nothing is owed once it returns.
  batch.handle(kInitTopic,
               device.init(Encoding::json, static_cast<std::uint32_t>(kNowMs / 1000) + 3),
               kNowMs + 3000, (kNowMs + 3000) * 1000);
  EXPECT_TRUE(batch.has_answers());
  store_->fail_next_commits = 1;
  batch.end();
  EXPECT_EQ(published.size(), 3u);
  EXPECT_FALSE(batch.has_answers());
}

TEST_F(BatchTest, DownlinksAreRefusedInsideABatch) {
  ScriptedDevice device(material_, 64);
  confirmed_session(device);
  ASSERT_TRUE(service_->begin_batch().ok());
  const HandleResult r = send_downlink("esp32-01", bytes_of("x"), kNowMs + 10);
  EXPECT_EQ(r.reason, EdgeReason::internal_error);
  EXPECT_FALSE(r.processed());
  ASSERT_TRUE(service_->commit_batch().ok());
  EXPECT_TRUE(send_downlink("esp32-01", bytes_of("x"), kNowMs + 10).ok());
}

TEST_F(BatchTest, AFailedCommitIsRetriedMessageByMessage) {
  MessageBatch batch = make_batch();
  ScriptedDevice device(material_, 65);
  handshake(device, Encoding::json);
  for (int i = 0; i < 3; ++i)
    batch.handle(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs, kNowMs * 1000);
  EXPECT_EQ(batch.size(), 3u);
  store_->fail_next_commits = 1;
  batch.end();
  EXPECT_TRUE(fail_stops.empty());
  ASSERT_EQ(outcomes.size(), 3u);
  for (const HandleResult& r : outcomes) EXPECT_TRUE(r.ok()) << r.reason_name();
  EXPECT_EQ(sink_.rows.size(), 3u);
  EXPECT_EQ(sink_.table_rows(), 3);
}

// Metrics and logs count each message once, with its final outcome: after the batch's commit,
// or from its handling again when the commit failed; transient failures on the way are reported
// apart (failed_attempt).
TEST_F(BatchTest, EachMessageSettlesOnceWithItsFinalOutcome) {
  std::vector<std::string> settled;
  std::vector<std::string> failed;
  MessageBatchOptions o = options();
  o.settled = [&](const SettledMessage& m) { settled.push_back(m.result.reason_name()); };
  o.failed_attempt = [&](const SettledMessage& m) { failed.push_back(m.result.reason_name()); };
  MessageBatch batch(
      *service_, [this](const Publish& p) { published.push_back(p); }, o);
  ScriptedDevice device(material_, 68);
  handshake(device, Encoding::json);
  // A frame twice in one batch: the second is a replay, seen in the batch's own writes.
  const Bytes first = device.data(kReading, kNowMs, Encoding::json);
  batch.handle(kDataTopic, first, kNowMs, kNowMs * 1000);
  batch.handle(kDataTopic, first, kNowMs, kNowMs * 1000);
  EXPECT_TRUE(settled.empty());  // nothing is final before the commit
  batch.end();
  EXPECT_EQ(settled, (std::vector<std::string>{"ok", "replay"}));
  EXPECT_EQ(sink_.table_rows(), 1);

  settled.clear();
  const Bytes f0 = device.data(kReading, kNowMs, Encoding::json);
  batch.handle(kDataTopic, f0, kNowMs, kNowMs * 1000);
  batch.handle(kDataTopic, f0, kNowMs, kNowMs * 1000);
  store_->fail_next_commits = 1;
  batch.end();  // fails: both are handled again, alone
  EXPECT_EQ(settled, (std::vector<std::string>{"ok", "replay"}));
  EXPECT_TRUE(failed.empty());
  EXPECT_EQ(sink_.table_rows(), 2);

  settled.clear();
  sink_.fail_next = 1;  // the sink refuses the next row once: retried alone, then stored
  batch.handle(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs, kNowMs * 1000);
  batch.end();
  EXPECT_EQ(failed, (std::vector<std::string>{"sink_failure"}));
  EXPECT_EQ(settled, (std::vector<std::string>{"ok"}));
  EXPECT_EQ(sink_.table_rows(), 3);
}

// A conflict (another edge on the shared store was first for one device) re-handles the batch
// once as a batch: one more commit, not one transaction per message; a second conflict falls
// back to one by one.
TEST_F(BatchTest, AConflictedCommitIsHandledAgainAsOneBatchThenOneByOne) {
  std::vector<std::string> settled;
  MessageBatchOptions o = options();
  o.settled = [&](const SettledMessage& m) { settled.push_back(m.result.reason_name()); };
  MessageBatch batch(
      *service_, [this](const Publish& p) { published.push_back(p); }, o);
  ScriptedDevice device(material_, 69);
  handshake(device, Encoding::json);
  for (int round = 1; round <= 2; ++round) {
    settled.clear();
    for (int i = 0; i < 4; ++i)
      batch.handle(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs,
                   kNowMs * 1000);
    store_->conflict_next_commits = round;
    const int before = store_->commits;
    batch.end();
    EXPECT_TRUE(fail_stops.empty());
    EXPECT_EQ(settled, std::vector<std::string>(4, "ok")) << round;
    EXPECT_EQ(sink_.table_rows(), 4 * round);
    // round 1: the batch, then the batch again; round 2: both conflict, then 4 alone.
    EXPECT_EQ(store_->commits - before, round == 1 ? 2 : 2 + 4) << round;
  }
}

TEST_F(BatchTest, AMessageThatCannotBeStoredFailStopsAfterTheBatchBeforeItCommits) {
  MessageBatch batch = make_batch();
  ScriptedDevice device(material_, 66);
  handshake(device, Encoding::json);
  store_->uplink_path = false;  // every frame saves the whole state (the switch below fails it)
  batch.handle(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs, kNowMs * 1000);
  store_->fail_save = true;  // a broken disk: every save fails from now on
  EXPECT_THROW(batch.handle(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs,
                            kNowMs * 1000),
               FailStopped);
  ASSERT_EQ(fail_stops.size(), 1u);
  EXPECT_NE(fail_stops[0].find("NOT PROCESSED after 3 attempts"), std::string::npos)
      << fail_stops[0];
  // The message before it was committed first (its redelivery is then a replay).
  EXPECT_EQ(sink_.table_rows(), 1);
}

// The fail-stop line says what the sink said (e.g. the CSV file and the system's error), not
// only that the commit failed.
TEST_F(BatchTest, ASinkThatRefusesItsUnitIsNamedInTheFailStopLine) {
  MessageBatch batch = make_batch();
  ScriptedDevice device(material_, 70);
  handshake(device, Encoding::json);
  batch.handle(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs, kNowMs * 1000);
  sink_.refuse_before_commit = "server_logs_dsekp.csv: write: No space left on device";
  EXPECT_THROW(batch.end(), FailStopped);
  ASSERT_EQ(fail_stops.size(), 1u);
  EXPECT_NE(fail_stops[0].find("No space left on device"), std::string::npos) << fail_stops[0];
  EXPECT_EQ(sink_.table_rows(), 0);
}

TEST_F(BatchTest, ACommitThatKeepsFailingFailStops) {
  MessageBatch batch = make_batch();
  ScriptedDevice device(material_, 67);
  handshake(device, Encoding::json);
  batch.handle(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs, kNowMs * 1000);
  EXPECT_EQ(batch.size(), 1u);  // handled and kept in the batch, not refused
  store_->fail_commit = true;
  EXPECT_THROW(batch.end(), FailStopped);
  EXPECT_EQ(sink_.table_rows(), 0);
  EXPECT_TRUE(published.empty());
}

}  // namespace
}  // namespace dsekp::edge::testing
