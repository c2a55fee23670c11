// Exactly-once: a failing sink or store rolls the whole unit back (state and rows), the result
// says "not processed", and a redelivery of the same bytes is accepted once the failure is gone,
// then refused as a replay. A restarted edge (a new EdgeService over the same files) rejects
// frames it accepted before, accepts new ones without a new handshake, answers a retransmitted
// INIT with the stored ACK, and never reuses a downlink seq.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "service_fixture.hpp"

namespace dsekp::edge::testing {
namespace {

void expect_not_processed(const HandleResult& r, EdgeReason reason) {
  EXPECT_EQ(r.reason, reason) << r.reason_name();
  EXPECT_FALSE(r.processed());
  EXPECT_TRUE(r.publishes.empty());
  EXPECT_FALSE(r.frame.has_value());
  EXPECT_FALSE(r.session_confirmed);
}

TEST_F(EdgeServiceTest, SinkFailureRollsBackAndTheRedeliveryIsAcceptedOnce) {
  ScriptedDevice device(material_, 41);
  handshake(device, Encoding::json);
  const Bytes first = device.data(kReading, kNowMs, Encoding::json);
  sink_.fail = true;
  const HandleResult failed = deliver(kDataTopic, first);
  expect_not_processed(failed, EdgeReason::sink_failure);
  EXPECT_STREQ(failed.reason_name(), "sink_failure");
  EXPECT_EQ(sink_.rollbacks, 1);
  EXPECT_TRUE(sink_.rows.empty());
  EXPECT_EQ(sink_.table_rows(), 0);

  sink_.fail = false;
  const HandleResult redelivered = deliver(kDataTopic, first, kNowMs + 1000);
  ASSERT_TRUE(redelivered.ok()) << redelivered.reason_name();
  // The failed attempt did not even confirm the session: its state change was rolled back.
  EXPECT_TRUE(redelivered.session_confirmed);
  expect_rejected(deliver(kDataTopic, first, kNowMs + 2000), "replay");
  EXPECT_EQ(sink_.rows.size(), 1u);
  EXPECT_EQ(sink_.table_rows(), 1);
}

TEST_F(EdgeServiceTest, AThrowingSinkIsASinkFailure) {
  ScriptedDevice device(material_, 47);
  handshake(device, Encoding::json);
  const Bytes frame = device.data(kReading, kNowMs, Encoding::json);
  sink_.throw_on_write = true;
  const HandleResult failed = deliver(kDataTopic, frame);
  expect_not_processed(failed, EdgeReason::sink_failure);
  // The sink's own words reach the operator (the log line, the fail-stop line).
  EXPECT_EQ(failed.detail, "the sink refused the row: sink exploded");
  sink_.throw_on_write = false;
  EXPECT_TRUE(deliver(kDataTopic, frame).ok());
  EXPECT_EQ(sink_.table_rows(), 1);
}

// handle() is noexcept: an exception from below (here: out of memory in the store) becomes
// internal_error, with the unit rolled back and the message not processed.
TEST_F(EdgeServiceTest, AnExceptionBelowIsAnInternalErrorNotACrash) {
  ScriptedDevice device(material_, 48);
  handshake(device, Encoding::json);
  const Bytes frame = device.data(kReading, kNowMs, Encoding::json);
  store_->throw_on_load = true;
  const HandleResult r = deliver(kDataTopic, frame);
  expect_not_processed(r, EdgeReason::internal_error);
  EXPECT_EQ(r.kind, MessageKind::data);
  expect_not_processed(send_downlink("esp32-01", bytes_of("x"), kNowMs),
                       EdgeReason::internal_error);
  store_->throw_on_load = false;
  EXPECT_TRUE(deliver(kDataTopic, frame).ok());
  const dsekp::test::ResultTally& c = tally_;
  EXPECT_EQ(c.edge_rejections[static_cast<std::size_t>(EdgeReason::internal_error)], 2u);
}

// Two writers of one device (e.g. two edge processes on one database): the one whose loaded
// state is no longer current fails with generation_conflict instead of overwriting the other's
// window, and the redelivered frame is then judged on the current state.
TEST_F(EdgeServiceTest, AConcurrentWriterIsAConflictNotALostUpdate) {
  ScriptedDevice device(material_, 49);
  handshake(device, Encoding::compact);
  const Bytes frame = device.data(kReading, kNowMs, Encoding::compact);
  store_->before_begin = [&] {
    std::string error;
    auto other = SqliteSessionStore::open(dir_.file("state.db"), {}, error);
    ASSERT_NE(other, nullptr) << error;
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    ASSERT_TRUE(other->load(device.dev_id(), state, generation).ok());
    ASSERT_TRUE(other->save(device.dev_id(), state, kNowMs, generation).ok());
  };
  const HandleResult r = deliver(kDataTopic, frame);
  expect_not_processed(r, EdgeReason::store_failure);
  EXPECT_EQ(r.store_status, StoreStatus::generation_conflict);
  EXPECT_EQ(sink_.table_rows(), 0);
  EXPECT_TRUE(deliver(kDataTopic, frame).ok());
}

TEST_F(EdgeServiceTest, StoreCommitFailureRollsBackStateAndRows) {
  ScriptedDevice device(material_, 42);
  handshake(device, Encoding::compact);
  const Bytes frame = device.data(kReading, kNowMs, Encoding::compact);
  store_->fail_commit = true;
  const HandleResult failed = deliver(kDataTopic, frame);
  expect_not_processed(failed, EdgeReason::store_failure);
  EXPECT_EQ(failed.store_status, StoreStatus::storage_failure);
  EXPECT_NE(failed.detail.find("commit"), std::string::npos) << failed.detail;
  // The sink had written its row into the same transaction: it went with the rollback.
  EXPECT_EQ(sink_.writes, 1);
  EXPECT_EQ(sink_.table_rows(), 0);
  EXPECT_TRUE(sink_.rows.empty());

  store_->fail_commit = false;
  ASSERT_TRUE(deliver(kDataTopic, frame).ok());
  expect_rejected(deliver(kDataTopic, frame), "replay");
  EXPECT_EQ(sink_.table_rows(), 1);
}

TEST_F(EdgeServiceTest, StoreFailuresOnEveryStepAreReportedAndChangeNothing) {
  ScriptedDevice device(material_, 43);
  const Bytes init = device.init(Encoding::json);
  store_->fail_load = true;
  expect_not_processed(deliver(kInitTopic, init), EdgeReason::store_failure);
  store_->fail_load = false;
  store_->fail_begin = true;
  expect_not_processed(deliver(kInitTopic, init), EdgeReason::store_failure);
  store_->fail_begin = false;
  store_->fail_save = true;
  expect_not_processed(deliver(kInitTopic, init), EdgeReason::store_failure);
  store_->fail_save = false;
  store_->fail_commit = true;
  expect_not_processed(deliver(kInitTopic, init), EdgeReason::store_failure);
  store_->fail_commit = false;
  EXPECT_FALSE(has_state(device.dev_id()));
  // No ACK went out for any of those, so the device retransmits; the edge has no trace of the
  // INIT and accepts it as new.
  const HandleResult r = deliver(kInitTopic, init);
  ASSERT_TRUE(r.ok()) << r.reason_name();
  EXPECT_TRUE(r.handshake_accepted);
  ASSERT_EQ(device.take_ack(r.publishes[0].payload), Error::ok);
  ASSERT_TRUE(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json)).ok());

  // A downlink whose state cannot be saved is not published, and its seq is not consumed.
  store_->fail_commit = true;
  expect_not_processed(send_downlink("esp32-01", bytes_of("a"), kNowMs), EdgeReason::store_failure);
  store_->fail_commit = false;
  const HandleResult down = send_downlink("esp32-01", bytes_of("b"), kNowMs);
  ASSERT_TRUE(down.ok());
  DataFrame frame;
  ASSERT_EQ(decode_data(down.publishes[0].payload, Direction::downlink, frame), Error::ok);
  EXPECT_EQ(frame.seq, 0u);
}

// A stored state that does not decode is never trusted, and never taken for a transient store
// failure (which would fail-stop the whole edge on every redelivery): that one device is
// quarantined, by name, and every other device goes on; removing its state (what `dsekp keys
// reset-state` does) lets it start again with a new handshake.
TEST_F(EdgeServiceTest, ACorruptStoredStateQuarantinesThatDeviceOnly) {
  const DeviceMaterial other_material = add_device("esp32-02");
  ScriptedDevice device(material_, 44);
  ScriptedDevice other(other_material, 46);
  confirmed_session(device);
  confirmed_session(other);
  ASSERT_EQ(sqlite3_exec(sqlite_->connection(),
                         "UPDATE device_state SET state = x'0102' WHERE dev_id = 'esp32-01'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  const auto expect_quarantined = [](const HandleResult& r) {
    EXPECT_EQ(r.reason, EdgeReason::corrupt_state) << r.reason_name();
    EXPECT_STREQ(r.reason_name(), "corrupt_state");
    EXPECT_TRUE(r.processed()) << "final, not a store failure to retry";
    EXPECT_TRUE(r.publishes.empty());
    EXPECT_FALSE(r.frame.has_value());
    EXPECT_NE(r.detail.find("esp32-01"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("reset-state"), std::string::npos) << r.detail;
  };
  expect_quarantined(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json)));
  expect_quarantined(deliver(kInitTopic, device.init(Encoding::json, kNowMs / 1000 + 1)));
  expect_quarantined(send_downlink("esp32-01", bytes_of("x"), kNowMs));
  // Anyone can name the device in an unauthenticated frame: still only a refusal.
  Bytes forged = device.data(kReading, kNowMs, Encoding::compact);
  forged.back() ^= 1;
  expect_quarantined(deliver(kDataTopic, forged));
  // Everyone else flows.
  for (std::uint64_t i = 1; i <= 3; ++i)
    ASSERT_TRUE(deliver(kDataTopic, other.data(kReading, kNowMs + i, Encoding::json)).ok());
  ASSERT_TRUE(send_downlink("esp32-02", bytes_of("y"), kNowMs).ok());

  // The reset: the state and its credential record go; the device handshakes from nothing.
  {
    Transaction tx(*sqlite_);
    ASSERT_TRUE(tx.status().ok());
    ASSERT_TRUE(sqlite_->remove(material_.credentials.dev_id).ok());
    ASSERT_TRUE(generations_->remove(material_.credentials.dev_id).ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  ScriptedDevice rebooted(material_, 47);
  handshake(rebooted, Encoding::json, kNowMs + 2000);
  EXPECT_TRUE(deliver(kDataTopic, rebooted.data(kReading, kNowMs + 2001, Encoding::json)).ok());
}

TEST_F(EdgeServiceTest, RestartedEdgeContinuesWhereItStopped) {
  ScriptedDevice device(material_, 45);
  handshake(device, Encoding::json);
  std::vector<Bytes> sent;
  for (std::uint32_t i = 0; i < 10; ++i) {
    sent.push_back(device.data(kReading, kNowMs + i, i % 2 ? Encoding::compact : Encoding::json));
    ASSERT_TRUE(deliver(kDataTopic, sent.back()).ok());
  }
  std::string text;
  const HandleResult down0 = send_downlink("esp32-01", bytes_of("before"), kNowMs);
  ASSERT_TRUE(down0.ok());
  ASSERT_EQ(device.open_down(down0.publishes[0].payload, text), Error::ok);

  start_edge();  // the restart: new service, new store connection, same files
  for (const Bytes& old : sent) expect_rejected(deliver(kDataTopic, old, kNowMs + 100), "replay");
  for (std::uint32_t i = 10; i < 20; ++i) {
    const HandleResult r = deliver(kDataTopic, device.data(kReading, kNowMs + i, Encoding::json));
    ASSERT_TRUE(r.ok()) << r.reason_name();
    EXPECT_FALSE(r.session_confirmed);  // the session was confirmed before the restart
  }
  // The downlink seq continues: the device would refuse a reused one as a replay.
  const HandleResult down1 = send_downlink("esp32-01", bytes_of("after"), kNowMs);
  ASSERT_TRUE(down1.ok());
  ASSERT_EQ(device.open_down(down1.publishes[0].payload, text), Error::ok);
  EXPECT_EQ(text, "after");
  EXPECT_EQ(tally_.handshakes, 0u);
  EXPECT_EQ(sink_.table_rows(), 20);
}

TEST_F(EdgeServiceTest, RestartedEdgeAnswersARetransmittedInitWithTheStoredAck) {
  ScriptedDevice device(material_, 46);
  const Bytes init = device.init(Encoding::compact);
  const HandleResult first = deliver(kInitTopic, init);
  ASSERT_TRUE(first.ok());
  start_edge();
  const HandleResult again = deliver(kInitTopic, init, kNowMs + 3000);
  ASSERT_TRUE(again.ok()) << again.reason_name();
  EXPECT_TRUE(again.ack_retransmitted);
  EXPECT_EQ(again.publishes[0].payload, first.publishes[0].payload);
  ASSERT_EQ(device.take_ack(again.publishes[0].payload), Error::ok);
  EXPECT_TRUE(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::compact)).ok());
}

}  // namespace
}  // namespace dsekp::edge::testing
