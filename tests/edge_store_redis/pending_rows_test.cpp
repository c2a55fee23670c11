// The write-ahead of the sink rows in Redis (edge/daemon/pending_rows.hpp) against a real
// redis-server and a real SQLite state database with the real telemetry and CSV sinks: the
// commit script replaces the edge's pending list with the unit's rows (savepoints and
// conflicts respected), and the start-up recovery adds exactly the rows the local sinks lack,
// then clears the list. Also the row record's encoding (edge/sinks/accepted_frame_record.hpp).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "edge/daemon/pending_rows.hpp"
#include "edge/service/write_unit.hpp"
#include "edge/sinks/accepted_frame_record.hpp"
#include "edge/sinks/composite_sink.hpp"
#include "edge/sinks/server_csv_sink.hpp"
#include "edge/sinks/sqlite_telemetry_sink.hpp"
#include "edge/store/sqlite_session_store.hpp"
#include "store_backends.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr std::uint64_t kNow = 1'764'460'800'000;

AcceptedFrame make_row(std::uint32_t seq, std::uint64_t recvts_us) {
  AcceptedFrame r;
  r.mode = Mode::dsekp;
  r.encoding = seq % 2 == 0 ? Encoding::json : Encoding::compact;
  r.dev_id = "esp32-01";
  r.sessctr = 7;
  r.seq = seq;
  r.recvts_us = recvts_us;
  r.recvts_ms = recvts_us / 1000;
  r.sendts_ms = r.recvts_ms + 3;  // the device clock ahead: a negative latency
  r.latency_ms = -3;
  r.ciphertext_b64 = "AAEC";
  r.iv_b64 = "AAAAAAAAAAAAAAAA";
  r.tag_b64 = "AAAAAAAAAAAAAAAAAAAAAA==";
  const std::string reading = R"({"seq":)" + std::to_string(seq) + "}";
  r.plaintext.assign(reading.begin(), reading.end());
  r.plaintext.push_back(0);  // a reading need not be text
  r.payload_size = 120 + seq;
  return r;
}

std::size_t count_lines(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(AcceptedFrameRecord, RoundTripsEveryFieldAndRefusesOtherVersions) {
  const AcceptedFrame row = make_row(41, 1'764'460'800'123'456);
  const std::string record = sinks::encode_accepted_frame(row);
  AcceptedFrame back;
  std::string error;
  ASSERT_TRUE(sinks::decode_accepted_frame(record, back, error)) << error;
  EXPECT_EQ(back.mode, row.mode);
  EXPECT_EQ(back.encoding, row.encoding);
  EXPECT_EQ(back.dev_id, row.dev_id);
  EXPECT_EQ(back.sessctr, row.sessctr);
  EXPECT_EQ(back.seq, row.seq);
  EXPECT_EQ(back.sendts_ms, row.sendts_ms);
  EXPECT_EQ(back.recvts_ms, row.recvts_ms);
  EXPECT_EQ(back.recvts_us, row.recvts_us);
  EXPECT_EQ(back.latency_ms, row.latency_ms);
  EXPECT_EQ(back.ciphertext_b64, row.ciphertext_b64);
  EXPECT_EQ(back.iv_b64, row.iv_b64);
  EXPECT_EQ(back.tag_b64, row.tag_b64);
  EXPECT_EQ(back.plaintext, row.plaintext);
  EXPECT_EQ(back.payload_size, row.payload_size);
  EXPECT_LT(record.size(), 160u);
  // Version 2 (the first byte after the array header is the version 1 as a positive fixint).
  std::string v2 = record;
  ASSERT_EQ(v2[1], '\x01');
  v2[1] = '\x02';
  EXPECT_FALSE(sinks::decode_accepted_frame(v2, back, error));
  EXPECT_NE(error.find("version"), std::string::npos) << error;
  EXPECT_FALSE(sinks::decode_accepted_frame(record.substr(0, record.size() - 1), back, error));
  EXPECT_FALSE(sinks::decode_accepted_frame("", back, error));
  EXPECT_FALSE(sinks::decode_accepted_frame("garbage", back, error));
}

// The base64 fields go into the server CSV unquoted, so a record whose ciphertext, IV or tag is
// not canonical base64 (a separator, a line break, bad padding) is refused, not re-inserted.
TEST(AcceptedFrameRecord, RefusesBase64FieldsThatAreNotCanonical) {
  for (const std::string bad : {"AA,\nBB==", "a\"b", "AAA", "AA=A", "QUJ="}) {
    for (int field = 0; field < 3; ++field) {
      AcceptedFrame row = make_row(7, 1'764'460'800'123'456);
      (field == 0 ? row.ciphertext_b64 : field == 1 ? row.iv_b64 : row.tag_b64) = bad;
      AcceptedFrame back;
      std::string error;
      EXPECT_FALSE(sinks::decode_accepted_frame(sinks::encode_accepted_frame(row), back, error))
          << bad << " in field " << field;
      EXPECT_NE(error.find("base64"), std::string::npos) << error;
    }
  }
}

class PendingRows : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RedisBackend::start_server(); }
  static void TearDownTestSuite() { RedisBackend::stop_server(); }

  void SetUp() override {
    redis_ = backend_.open_redis();
    ASSERT_NE(redis_, nullptr);
    key_ = redis_->pending_key_of("dsekp-edge-a");
    redis_->set_pending_key(key_);
    std::string error;
    local_ = SqliteSessionStore::open(dir_.file("state.db"), {}, error);
    ASSERT_NE(local_, nullptr) << error;
    telemetry_ = sinks::SqliteTelemetrySink::open(local_->connection(), error);
    ASSERT_NE(telemetry_, nullptr) << error;
    ASSERT_TRUE(telemetry_->enable_lookup(error)) << error;
    csv_ = std::make_unique<sinks::ServerCsvSink>(dir_.path().string(), local_->connection());
    sinks_.add(*telemetry_);
    sinks_.add(*csv_);
  }

  // Commits `rows` locally, as a live unit would.
  void commit_locally(const std::vector<AcceptedFrame>& rows) {
    ASSERT_TRUE(local_->begin().ok());
    for (const auto& r : rows) ASSERT_TRUE(sinks_.write(r));
    ASSERT_TRUE(commit_with_sinks(*local_, &sinks_).ok());
  }
  // Commits a state save of one device with `rows` as the unit's write-ahead.
  StoreResult commit_in_redis(const std::vector<AcceptedFrame>& rows,
                              std::uint64_t generation = kAnyGeneration) {
    EXPECT_TRUE(redis_->begin().ok());
    EXPECT_TRUE(redis_->save(dev_id_of("esp32-01"), make_rich_state(), kNow, generation).ok());
    daemon::PendingRowsSink sink(*redis_);
    for (const auto& r : rows) EXPECT_TRUE(sink.write(r));
    return redis_->commit();
  }
  std::string llen() { return RedisBackend::server().command({"LLEN", key_}); }
  std::size_t telemetry_rows() {
    sqlite3_stmt* s = nullptr;
    std::size_t n = 0;
    if (sqlite3_prepare_v2(local_->connection(), "SELECT count(*) FROM telemetry", -1, &s,
                           nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
      n = static_cast<std::size_t>(sqlite3_column_int64(s, 0));
    sqlite3_finalize(s);
    return n;
  }
  std::size_t csv_rows() { return count_lines(dir_.file("server_logs_dsekp.csv")) - 1; }

  RedisBackend backend_;
  test::TempDir dir_;
  std::unique_ptr<RedisSessionStore> redis_;
  std::string key_;
  std::unique_ptr<SqliteSessionStore> local_;
  std::unique_ptr<sinks::SqliteTelemetrySink> telemetry_;
  std::unique_ptr<sinks::ServerCsvSink> csv_;
  sinks::CompositeSink sinks_;
};

TEST_F(PendingRows, EachCommitReplacesTheListWithItsRowsInTheSameRoundTrip) {
  EXPECT_EQ(key_, backend_.prefix() + "pending:{dsekp-edge-a}");
  ASSERT_TRUE(commit_in_redis({make_row(1, 1001), make_row(2, 1002), make_row(3, 1003)}).ok());
  EXPECT_EQ(redis_->last_commit_rows(), 3u);
  EXPECT_EQ(llen(), "3");
  const std::uint64_t before = redis_->round_trips();
  ASSERT_TRUE(commit_in_redis({make_row(4, 1004)}).ok());
  EXPECT_EQ(redis_->round_trips() - before, 1u) << "the rows ride in the commit script";
  std::vector<std::string> records;
  ASSERT_TRUE(redis_->read_pending(key_, records).ok());
  ASSERT_EQ(records.size(), 1u);
  AcceptedFrame back;
  std::string error;
  ASSERT_TRUE(sinks::decode_accepted_frame(records[0], back, error)) << error;
  EXPECT_EQ(back.seq, 4u);
  // A unit without rows empties the list (the previous unit is local by then).
  ASSERT_TRUE(commit_in_redis({}).ok());
  EXPECT_EQ(llen(), "0");
  // PSK rows are never written ahead (no shared state).
  AcceptedFrame psk = make_row(5, 1005);
  psk.mode = Mode::psk;
  ASSERT_TRUE(commit_in_redis({psk, make_row(6, 1006)}).ok());
  EXPECT_EQ(llen(), "1");
}

TEST_F(PendingRows, SavepointsRollbacksAndConflictsKeepTheListExact) {
  ASSERT_TRUE(commit_in_redis({make_row(1, 1001)}).ok());
  // A message undone in a batch takes its rows with it.
  ASSERT_TRUE(redis_->begin().ok());
  daemon::PendingRowsSink sink(*redis_);
  std::uint64_t g = kAnyGeneration;
  ASSERT_TRUE(redis_->savepoint().ok());
  ASSERT_TRUE(redis_->save(dev_id_of("esp32-01"), make_rich_state(), kNow, g).ok());
  ASSERT_TRUE(sink.write(make_row(2, 1002)));
  ASSERT_TRUE(redis_->release_savepoint().ok());
  ASSERT_TRUE(redis_->savepoint().ok());
  ASSERT_TRUE(sink.write(make_row(3, 1003)));
  ASSERT_TRUE(redis_->rollback_to_savepoint().ok());
  ASSERT_TRUE(redis_->commit().ok());
  EXPECT_EQ(llen(), "1");
  EXPECT_EQ(redis_->last_commit_rows(), 1u);
  // A rolled-back transaction writes nothing.
  ASSERT_TRUE(redis_->begin().ok());
  ASSERT_TRUE(sink.write(make_row(4, 1004)));
  ASSERT_TRUE(redis_->rollback().ok());
  EXPECT_EQ(llen(), "1");
  // A conflicting commit writes nothing either: the list keeps the last applied unit's rows.
  EXPECT_EQ(commit_in_redis({make_row(5, 1005), make_row(6, 1006)}, 999).status,
            StoreStatus::generation_conflict);
  std::vector<std::string> records;
  ASSERT_TRUE(redis_->read_pending(key_, records).ok());
  ASSERT_EQ(records.size(), 1u);
  AcceptedFrame back;
  std::string error;
  ASSERT_TRUE(sinks::decode_accepted_frame(records[0], back, error));
  EXPECT_EQ(back.seq, 2u);
  // Outside a transaction there is nothing to stage.
  EXPECT_EQ(redis_->stage_pending_row("dev", "x").status, StoreStatus::transaction_misuse);
}

TEST_F(PendingRows, RecoveryAddsTheAbsentRowsOnceAndClearsTheList) {
  const AcceptedFrame a = make_row(1, 1001), b = make_row(2, 1002), c = make_row(3, 1003);
  commit_locally({a});  // the unit committed locally only in part: a is there, b and c not
  ASSERT_TRUE(commit_in_redis({a, b, c}).ok());
  ASSERT_EQ(telemetry_rows(), 1u);
  daemon::PendingRecovery report;
  std::string error;
  ASSERT_TRUE(
      daemon::recover_pending_rows(*redis_, key_, *local_, *telemetry_, sinks_, report, error))
      << error;
  EXPECT_EQ(report.rows, 3u);
  EXPECT_EQ(report.inserted, 2u);
  EXPECT_EQ(telemetry_rows(), 3u);
  EXPECT_EQ(csv_rows(), 3u) << "the CSV got the recovered rows through the same sink path";
  EXPECT_EQ(telemetry_->contains(a), 1);
  EXPECT_EQ(telemetry_->contains(c), 1);
  EXPECT_EQ(llen(), "0") << "the list is cleared";
  // Again (a restart right after): nothing to do, nothing doubled.
  ASSERT_TRUE(
      daemon::recover_pending_rows(*redis_, key_, *local_, *telemetry_, sinks_, report, error));
  EXPECT_EQ(report.rows, 0u);
  EXPECT_EQ(telemetry_rows(), 3u);
  // A unit committed both in Redis and locally (a kill after the local commit): nothing added.
  const AcceptedFrame d = make_row(4, 1004);
  ASSERT_TRUE(commit_in_redis({d}).ok());
  commit_locally({d});
  ASSERT_TRUE(
      daemon::recover_pending_rows(*redis_, key_, *local_, *telemetry_, sinks_, report, error));
  EXPECT_EQ(report.rows, 1u);
  EXPECT_EQ(report.inserted, 0u);
  EXPECT_EQ(telemetry_rows(), 4u);
  EXPECT_EQ(csv_rows(), 4u);
  EXPECT_EQ(llen(), "0");
  // Same frame, another receive instant (a session counter reused after a key rotation): a
  // different row.
  AcceptedFrame again = d;
  again.recvts_us = 9999;
  EXPECT_EQ(telemetry_->contains(again), 0);
}

TEST_F(PendingRows, AnUnreadableRecordStopsTheRecoveryAndStaysInPlace) {
  ASSERT_EQ(RedisBackend::server().command({"RPUSH", key_, "not a record"}), "1");
  daemon::PendingRecovery report;
  std::string error;
  EXPECT_FALSE(
      daemon::recover_pending_rows(*redis_, key_, *local_, *telemetry_, sinks_, report, error));
  EXPECT_NE(error.find("element 0"), std::string::npos) << error;
  EXPECT_EQ(llen(), "1");
  EXPECT_EQ(telemetry_rows(), 0u);
}

}  // namespace
}  // namespace dsekp::edge::testing
