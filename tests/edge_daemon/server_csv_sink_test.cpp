// The exactly-once server CSV logs (edge/sinks/server_csv_sink.hpp): the journal written in the
// unit's transaction, and the repair at start-up after a kill between the commit and the append,
// a torn append, or garbage after the last row; the journal stays bounded; rollbacks leave no
// trace; reopen() for log rotation.
#include "edge/sinks/server_csv_sink.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "edge/sinks/server_csv_format.hpp"
#include "logs/log_schema.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::sinks {
namespace {

AcceptedFrame frame(std::uint32_t seq) {
  AcceptedFrame f;
  f.mode = Mode::dsekp;
  f.dev_id = "esp32-01";
  f.sessctr = 1;
  f.seq = seq;
  // One second apart: each row is alone in its bin_1s, so `throughput` is 1 whatever the
  // restarts (its running count starts again with the process: server_csv_sink.hpp).
  f.sendts_ms = 1'764'460'800'000 + 1000 * std::uint64_t{seq};
  f.recvts_ms = f.sendts_ms + 10;
  f.recvts_us = f.recvts_ms * 1000 + 7;
  f.latency_ms = 10;
  const std::string reading = R"({"t":)" + std::to_string(seq) + "}";
  f.plaintext.assign(reading.begin(), reading.end());
  return f;
}

class ServerCsvSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(dir_.file("state.db").c_str(), &db_), SQLITE_OK);
    exec("PRAGMA synchronous = OFF");  // durability of the test database is not under test
    std::filesystem::create_directories(logs_);
  }
  void TearDown() override {
    sink_.reset();
    sqlite3_close(db_);
  }
  void exec(const char* sql) {
    ASSERT_EQ(sqlite3_exec(db_, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  void open_sink() { sink_ = std::make_unique<ServerCsvSink>(logs_, db_); }
  /// One unit: BEGIN, write the rows, before_commit, COMMIT; `append` false simulates a kill
  /// right after the commit (the sink never hears committed()).
  void unit(std::initializer_list<std::uint32_t> seqs, bool append = true) {
    exec("BEGIN IMMEDIATE");
    for (const std::uint32_t s : seqs) ASSERT_TRUE(sink_->write(frame(s)));
    ASSERT_TRUE(sink_->before_commit());
    exec("COMMIT");
    if (append) sink_->committed();
  }
  std::int64_t journal_rows() {
    sqlite3_stmt* s = nullptr;
    std::int64_t n = -1;
    if (sqlite3_prepare_v2(db_, "SELECT count(*) FROM server_csv_journal", -1, &s, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
  }
  std::string csv() const { return dsekp::test::read_file(path_); }
  /// The expected file: the header and the rows of `seqs`.
  static std::string expected(std::initializer_list<std::uint32_t> seqs) {
    std::string out = logs::header_line(logs::LogKind::server, Mode::dsekp);
    for (const std::uint32_t s : seqs) out += server_csv_row(frame(s), 1);
    return out;
  }

  dsekp::test::TempDir dir_;
  std::string logs_ = dir_.file("logs");
  std::string path_ = logs_ + "/server_logs_dsekp.csv";
  sqlite3* db_ = nullptr;
  std::unique_ptr<ServerCsvSink> sink_;
};

// The rows hold decrypted readings: a new log is the owner's only, even under umask 022.
TEST_F(ServerCsvSinkTest, NewLogsAreCreatedForTheOwnerOnly) {
  const mode_t old_mask = ::umask(022);
  open_sink();
  ::umask(old_mask);
  for (const char* name : {"/server_logs_dsekp.csv", "/server_logs_psk.csv"}) {
    struct stat st {};
    ASSERT_EQ(::stat((logs_ + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << name;
  }
}

TEST_F(ServerCsvSinkTest, RowsCommittedButNeverAppendedAreRestoredAtStartUp) {
  open_sink();
  unit({0});
  unit({1, 2}, /*append=*/false);  // killed after the commit, before the append
  EXPECT_EQ(csv(), expected({0}));
  EXPECT_EQ(journal_rows(), 1);  // the unit's two lines, as one record (row 0's forgotten)
  sink_.reset();
  EXPECT_EQ(journal_rows(), 1);
  open_sink();
  EXPECT_EQ(sink_->repaired_rows(), 2u);
  EXPECT_EQ(csv(), expected({0, 1, 2}));
  unit({3});
  EXPECT_EQ(csv(), expected({0, 1, 2, 3}));
}

TEST_F(ServerCsvSinkTest, BothFilesAreRepairedFromOneUnit) {
  open_sink();
  AcceptedFrame psk = frame(9);
  psk.mode = Mode::psk;
  exec("BEGIN IMMEDIATE");
  ASSERT_TRUE(sink_->write(frame(0)));
  ASSERT_TRUE(sink_->write(psk));
  ASSERT_TRUE(sink_->before_commit());
  exec("COMMIT");                // killed before committed(): neither file has its row
  EXPECT_EQ(journal_rows(), 2);  // one record per file
  sink_.reset();
  open_sink();
  EXPECT_EQ(sink_->repaired_rows(), 2u);
  EXPECT_EQ(csv(), expected({0}));
  EXPECT_EQ(dsekp::test::read_file(logs_ + "/server_logs_psk.csv"),
            logs::header_line(logs::LogKind::server, Mode::psk) + server_csv_row(psk, 1));
}

TEST_F(ServerCsvSinkTest, ATornAppendIsCutAndRewritten) {
  open_sink();
  unit({0});
  unit({1}, /*append=*/false);
  // Killed in the middle of appending row 1: only its first bytes reached the file.
  const std::string row1 = server_csv_row(frame(1), 1);
  std::ofstream(path_, std::ios::app) << row1.substr(0, 17);
  sink_.reset();
  open_sink();
  EXPECT_EQ(sink_->repaired_rows(), 1u);
  EXPECT_EQ(csv(), expected({0, 1}));
}

TEST_F(ServerCsvSinkTest, GarbageAfterTheLastCommittedRowIsCut) {
  open_sink();
  unit({0});
  unit({1}, /*append=*/false);
  sink_.reset();
  open_sink();  // repairs row 1
  unit({2}, /*append=*/false);
  {
    std::ofstream out(path_, std::ios::app);
    out << expected({2}).substr(
        logs::header_line(logs::LogKind::server, Mode::dsekp).size());  // row 2 in place
    out << "99,half a row";                                             // and a torn one
  }
  sink_.reset();
  open_sink();
  EXPECT_EQ(sink_->repaired_rows(), 0u);
  EXPECT_EQ(csv(), expected({0, 1, 2}));
}

TEST_F(ServerCsvSinkTest, TheJournalHoldsOnlyTheLastUnit) {
  open_sink();
  for (std::uint32_t i = 0; i < 100; ++i) unit({i});
  EXPECT_EQ(journal_rows(), 1);
  sink_.reset();  // a clean stop forgets it
  EXPECT_EQ(journal_rows(), 0);
}

TEST_F(ServerCsvSinkTest, ARolledBackUnitLeavesNothing) {
  open_sink();
  unit({0});
  exec("BEGIN IMMEDIATE");
  ASSERT_TRUE(sink_->write(frame(1)));
  exec("ROLLBACK");
  sink_->rolled_back();
  unit({2});
  EXPECT_EQ(csv(), expected({0, 2}));
}

// Journaling outside a transaction would commit the record on its own, apart from the state.
TEST_F(ServerCsvSinkTest, AUnitOutsideATransactionIsRefused) {
  open_sink();
  EXPECT_TRUE(sink_->write(frame(0)));  // staged only
  EXPECT_FALSE(sink_->before_commit());
  sink_->rolled_back();
  EXPECT_EQ(journal_rows(), 0);
  EXPECT_EQ(csv(), expected({}));
}

// A journal written by an edge that kept one record per line (no `rows` column) is read with one
// row per record, and new records go on with the added column.
TEST_F(ServerCsvSinkTest, AJournalOfOneRecordPerLineIsStillRepaired) {
  exec(
      "CREATE TABLE server_csv_journal(id INTEGER PRIMARY KEY AUTOINCREMENT, file TEXT NOT NULL,"
      " offset INTEGER NOT NULL, line BLOB NOT NULL)");
  {
    open_sink();  // creates the file with its header, adds the column
    sink_.reset();
  }
  const std::string header = logs::header_line(logs::LogKind::server, Mode::dsekp);
  const std::string row0 = server_csv_row(frame(0), 1);
  const std::string row1 = server_csv_row(frame(1), 1);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db_,
                               "INSERT INTO server_csv_journal(file, offset, line) VALUES"
                               "('dsekp', ?1, ?2), ('dsekp', ?3, ?4)",
                               -1, &st, nullptr),
            SQLITE_OK);
  sqlite3_bind_int64(st, 1, static_cast<sqlite3_int64>(header.size()));
  sqlite3_bind_blob(st, 2, row0.data(), static_cast<int>(row0.size()), SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, static_cast<sqlite3_int64>(header.size() + row0.size()));
  sqlite3_bind_blob(st, 4, row1.data(), static_cast<int>(row1.size()), SQLITE_STATIC);
  ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  open_sink();
  EXPECT_EQ(sink_->repaired_rows(), 2u);
  EXPECT_EQ(csv(), expected({0, 1}));
  unit({2});
  EXPECT_EQ(csv(), expected({0, 1, 2}));
}

TEST_F(ServerCsvSinkTest, ReopenStartsTheRotatedFileWithItsHeader) {
  open_sink();
  unit({0, 1});
  std::filesystem::rename(path_, path_ + ".1");
  sink_->reopen();
  unit({2});
  EXPECT_EQ(dsekp::test::read_file(path_ + ".1"), expected({0, 1}));
  const std::string header = logs::header_line(logs::LogKind::server, Mode::dsekp);
  EXPECT_EQ(csv(), header + server_csv_row(frame(2), 1));
}

// In a batch each message is a savepoint: undoing one drops exactly its lines from both files and
// gives back the counters (offset, and the per-second `throughput` count) as they were at it,
// in what is appended and in what is journaled (checked by a kill before the append).
TEST_F(ServerCsvSinkTest, ASavepointUndoesOnlyTheLinesWrittenAfterIt) {
  const auto in_second = [](std::uint32_t seq, Mode mode) {
    AcceptedFrame f = frame(seq);
    f.mode = mode;
    f.recvts_ms = 1'764'460'800'010 + seq;  // all in one second: throughput counts them
    f.recvts_us = f.recvts_ms * 1000;
    return f;
  };
  for (const bool append : {true, false}) {
    SCOPED_TRACE(append ? "appended" : "journaled, repaired at start-up");
    sink_.reset();
    std::filesystem::remove_all(logs_);
    std::filesystem::create_directories(logs_);
    open_sink();
    exec("BEGIN IMMEDIATE");
    sink_->savepoint();
    ASSERT_TRUE(sink_->write(in_second(0, Mode::dsekp)));
    ASSERT_TRUE(sink_->write(in_second(1, Mode::psk)));
    sink_->savepoint();  // the next message: rows of both files, then undone
    ASSERT_TRUE(sink_->write(in_second(2, Mode::dsekp)));
    ASSERT_TRUE(sink_->write(in_second(3, Mode::psk)));
    sink_->rolled_back_to_savepoint();
    sink_->savepoint();  // a message with a PSK row only
    ASSERT_TRUE(sink_->write(in_second(4, Mode::psk)));
    sink_->savepoint();  // one with a DSEKP row, undone: the PSK file keeps its lines
    ASSERT_TRUE(sink_->write(in_second(5, Mode::dsekp)));
    sink_->rolled_back_to_savepoint();
    ASSERT_TRUE(sink_->before_commit());
    exec("COMMIT");
    if (append) {
      sink_->committed();
    } else {
      sink_.reset();
      open_sink();
      EXPECT_EQ(sink_->repaired_rows(), 3u);
    }
    EXPECT_EQ(csv(), logs::header_line(logs::LogKind::server, Mode::dsekp) +
                         server_csv_row(in_second(0, Mode::dsekp), 1));
    EXPECT_EQ(dsekp::test::read_file(logs_ + "/server_logs_psk.csv"),
              logs::header_line(logs::LogKind::server, Mode::psk) +
                  server_csv_row(in_second(1, Mode::psk), 1) +
                  server_csv_row(in_second(4, Mode::psk), 2));
  }
}

// A reopen for log rotation that cannot open the new file fails its unit (which is handed back to
// the broker); the next unit tries again instead of appending to a closed file.
TEST_F(ServerCsvSinkTest, AReopenThatFailsIsTriedAgainByTheNextUnit) {
  open_sink();
  unit({0});
  std::filesystem::rename(path_, path_ + ".1");
  std::filesystem::create_directory(path_);  // the new file cannot be opened
  sink_->reopen();
  exec("BEGIN IMMEDIATE");
  try {
    (void)sink_->write(frame(1));
    ADD_FAILURE() << "the row was staged for a file that cannot be opened";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open " + path_ + " for appending: Is a directory");
  }
  exec("ROLLBACK");
  sink_->rolled_back();
  std::filesystem::remove(path_);
  unit({2});
  EXPECT_EQ(dsekp::test::read_file(path_ + ".1"), expected({0}));
  EXPECT_EQ(csv(),
            logs::header_line(logs::LogKind::server, Mode::dsekp) + server_csv_row(frame(2), 1));
}

}  // namespace
}  // namespace dsekp::edge::sinks
