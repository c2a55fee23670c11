// Telemetry retention (edge/sinks/telemetry_retention.hpp): on a real SQLite table, the rows past
// the retention go oldest first in bounded chunks and the newest keep_newest rows stay whatever
// their age; and `dsekp edge --retention-days` prunes a state database at start-up.
#include "edge/sinks/telemetry_retention.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "edge/sinks/sqlite_telemetry_sink.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/edge_runner.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr std::uint64_t kDayMs = 86'400'000;
constexpr std::uint64_t kNowMs = 1'800'000'000'000;

class TelemetryTable {
 public:
  explicit TelemetryTable(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    std::string error;
    EXPECT_NE(sinks::SqliteTelemetrySink::open(db_, error), nullptr) << error;
  }
  ~TelemetryTable() { sqlite3_close(db_); }
  TelemetryTable(const TelemetryTable&) = delete;
  TelemetryTable& operator=(const TelemetryTable&) = delete;

  /// `n` rows received at `recvts_ms`, in one transaction.
  void insert(int n, std::uint64_t recvts_ms) {
    ASSERT_EQ(sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_,
                                 "INSERT INTO telemetry(mode, encoding, dev_id, sessctr, seq,"
                                 " sendts_ms, recvts_ms, latency_ms, payload_size, plaintext)"
                                 " VALUES('dsekp', 'json', 'esp32-01', 1, ?1, ?2, ?2, 0, 10, 'x')",
                                 -1, &s, nullptr),
              SQLITE_OK);
    for (int i = 0; i < n; ++i) {
      sqlite3_bind_int64(s, 1, ++seq_);
      sqlite3_bind_int64(s, 2, static_cast<sqlite3_int64>(recvts_ms));
      ASSERT_EQ(sqlite3_step(s), SQLITE_DONE);
      sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    ASSERT_EQ(sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  std::int64_t count(const char* where = "1") {
    const std::string sql = std::string("SELECT count(*) FROM telemetry WHERE ") + where;
    sqlite3_stmt* s = nullptr;
    std::int64_t n = -1;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
  }
  sqlite3* db() { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::int64_t seq_ = 0;
};

TEST(TelemetryRetention, RowsPastTheRetentionGoOldestFirstInChunks) {
  dsekp::test::TempDir dir;
  TelemetryTable table(dir.file("state.db"));
  const std::int64_t chunk = sinks::TelemetryRetention::kChunkRows;
  table.insert(static_cast<int>(2 * chunk + 10), kNowMs - 31 * kDayMs);  // past 30 days
  table.insert(5, kNowMs - 29 * kDayMs);                                 // within
  sinks::TelemetryRetention retention(table.db(), 30, 0);
  std::string error;
  // One chunk per call while there is more; then nothing until the idle interval has passed.
  EXPECT_EQ(retention.maybe_prune(kNowMs, error), chunk) << error;
  EXPECT_EQ(table.count(), chunk + 15);
  EXPECT_EQ(retention.maybe_prune(kNowMs + 1, error), chunk);
  EXPECT_EQ(retention.maybe_prune(kNowMs + 2, error), 10);
  EXPECT_EQ(table.count(), 5);
  table.insert(3, kNowMs - 40 * kDayMs);  // old rows arriving late (recovered, a clock)
  EXPECT_EQ(retention.maybe_prune(kNowMs + 3, error), 0) << "not due yet";
  // Old rows that arrived after newer ones go too: they are in the oldest chunk.
  EXPECT_EQ(retention.maybe_prune(kNowMs + 4 + sinks::TelemetryRetention::kIdleIntervalMs, error),
            3);
  EXPECT_EQ(table.count(), 5);
  EXPECT_EQ(retention.prune_all(kNowMs + 2 * kDayMs, error), 5) << "all past 30 days now";
  EXPECT_EQ(table.count(), 0);
}

TEST(TelemetryRetention, TheNewestRowsStayWhateverTheirAge) {
  dsekp::test::TempDir dir;
  TelemetryTable table(dir.file("state.db"));
  table.insert(2500, kNowMs - 400 * kDayMs);
  sinks::TelemetryRetention retention(table.db(), 1, 256);
  std::string error;
  EXPECT_EQ(retention.prune_all(kNowMs, error), 2500 - 256) << error;
  EXPECT_EQ(table.count(), 256);
  EXPECT_EQ(table.count("seq > 2500 - 256"), 256) << "the newest ones";
  EXPECT_EQ(retention.prune_all(kNowMs, error), 0);
}

// The daemon prunes the state database once before it subscribes, keeping the newest
// --batch-max rows, and logs how many went.
TEST(TelemetryRetention, TheEdgePrunesAtStartUp) {
  dsekp::test::TempDir dir;
  const std::string registry_path = dir.file("registry.db");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  const std::string state = dir.file("state.db");
  const std::uint64_t now_ms = unix_ms_now();
  {
    TelemetryTable table(state);
    table.insert(1500, now_ms - 10 * kDayMs);
    table.insert(20, now_ms - 2 * kDayMs);
    table.insert(3, now_ms);
  }
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"), "allow_anonymous true\n");
  EdgeRunner edge(
      dir, {::dsekp::test::cli_path(), "edge", "--broker",
            "127.0.0.1:" + std::to_string(broker.port()), "--db", registry_path, "--state-db",
            state, "--no-csv", "--metrics", "off", "--retention-days", "7", "--batch-max", "16"});
  ASSERT_TRUE(edge.start());
  EXPECT_NE(edge.stderr_text().find("retention: 1500 telemetry rows older than 7 days deleted"),
            std::string::npos)
      << edge.stderr_text();
  EXPECT_EQ(edge.terminate(), std::optional<int>(0));
  TelemetryTable table(state);
  EXPECT_EQ(table.count(), 23);
}

}  // namespace
}  // namespace dsekp::edge::testing
