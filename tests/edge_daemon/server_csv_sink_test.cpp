// The exactly-once server CSV logs (edge/sinks/server_csv_sink.hpp): a unit's lines are in the
// file when it commits, with the files' ends recorded in its transaction; the lines of a unit that
// did not commit (a kill between the append and the commit, a rollback, a failed append) are cut;
// a file replaced outside the edge is never cut; an earlier version's journal is put back once;
// reopen() for log rotation.
#include "edge/sinks/server_csv_sink.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
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
  /// One unit: BEGIN, write the rows, before_commit, COMMIT, committed(); with `told` false the
  /// edge is killed right after the commit (the sink never hears committed()) and restarted.
  void unit(std::initializer_list<std::uint32_t> seqs, bool told = true) {
    exec("BEGIN IMMEDIATE");
    for (const std::uint32_t s : seqs) ASSERT_TRUE(sink_->write(frame(s)));
    ASSERT_TRUE(sink_->before_commit());
    exec("COMMIT");
    if (told) {
      sink_->committed();
    } else {
      sink_.reset();
      open_sink();
    }
  }
  /// A unit whose edge is killed after the append, before the commit: its transaction is gone.
  void killed_before_commit(std::initializer_list<std::uint32_t> seqs) {
    exec("BEGIN IMMEDIATE");
    for (const std::uint32_t s : seqs) ASSERT_TRUE(sink_->write(frame(s)));
    ASSERT_TRUE(sink_->before_commit());
    sink_.reset();
    exec("ROLLBACK");
  }
  std::int64_t count(const char* sql) {
    sqlite3_stmt* s = nullptr;
    std::int64_t n = -1;
    if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
  }
  std::string csv() const { return dsekp::test::read_file(path_); }
  static std::string header() { return logs::header_line(logs::LogKind::server, Mode::dsekp); }
  /// The expected file: the header and the rows of `seqs`.
  static std::string expected(std::initializer_list<std::uint32_t> seqs) {
    std::string out = header();
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

// The lines reach the file before the commit, and the file's end is recorded in the unit's
// transaction: a kill right after the commit loses nothing and cuts nothing.
TEST_F(ServerCsvSinkTest, AUnitsLinesAreInTheFileWhenItCommits) {
  open_sink();
  unit({0});
  exec("BEGIN IMMEDIATE");
  ASSERT_TRUE(sink_->write(frame(1)));
  ASSERT_TRUE(sink_->write(frame(2)));
  EXPECT_EQ(csv(), expected({0}));  // staged only
  ASSERT_TRUE(sink_->before_commit());
  EXPECT_EQ(csv(), expected({0, 1, 2}));
  exec("COMMIT");
  sink_->committed();
  EXPECT_EQ(count("SELECT end FROM server_csv_end WHERE file = 'dsekp'"),
            static_cast<std::int64_t>(expected({0, 1, 2}).size()));
  unit({3}, /*told=*/false);
  EXPECT_EQ(sink_->cut_rows(), 0u);
  EXPECT_EQ(csv(), expected({0, 1, 2, 3}));
  unit({4});
  EXPECT_EQ(csv(), expected({0, 1, 2, 3, 4}));
}

TEST_F(ServerCsvSinkTest, LinesOfAUnitKilledBeforeItsCommitAreCutAtStartUp) {
  open_sink();
  unit({0});
  killed_before_commit({1, 2});
  EXPECT_EQ(csv(), expected({0, 1, 2}));  // appended, never committed
  open_sink();
  EXPECT_EQ(sink_->cut_rows(), 2u);
  EXPECT_EQ(csv(), expected({0}));
  unit({1, 2});  // the broker's redelivery
  EXPECT_EQ(csv(), expected({0, 1, 2}));
}

TEST_F(ServerCsvSinkTest, BothFilesAreCutAfterOneUnit) {
  open_sink();
  AcceptedFrame psk = frame(9);
  psk.mode = Mode::psk;
  exec("BEGIN IMMEDIATE");
  ASSERT_TRUE(sink_->write(frame(0)));
  ASSERT_TRUE(sink_->write(psk));
  ASSERT_TRUE(sink_->before_commit());
  sink_.reset();  // killed before the commit
  exec("ROLLBACK");
  const std::string psk_path = logs_ + "/server_logs_psk.csv";
  EXPECT_NE(dsekp::test::read_file(psk_path), logs::header_line(logs::LogKind::server, Mode::psk));
  open_sink();
  EXPECT_EQ(sink_->cut_rows(), 2u);
  EXPECT_EQ(csv(), expected({}));
  EXPECT_EQ(dsekp::test::read_file(psk_path), logs::header_line(logs::LogKind::server, Mode::psk));
}

// A kill in the middle of the append leaves part of a line: cut with the rest of the unit.
TEST_F(ServerCsvSinkTest, ATornAppendIsCut) {
  open_sink();
  unit({0});
  killed_before_commit({1, 2});
  std::filesystem::resize_file(path_, expected({0, 1}).size() + 17);  // the write got that far
  open_sink();
  EXPECT_EQ(csv(), expected({0}));
  unit({1, 2});
  EXPECT_EQ(csv(), expected({0, 1, 2}));
}

// Lines after the recorded end that no unit of the edge wrote (someone else appended) are kept.
TEST_F(ServerCsvSinkTest, LinesNoUnitWroteAreNeverCut) {
  open_sink();
  unit({0});
  sink_.reset();
  std::ofstream(path_, std::ios::app) << server_csv_row(frame(7), 1);
  open_sink();
  EXPECT_EQ(sink_->cut_rows(), 0u);
  EXPECT_EQ(csv(), expected({0, 7}));
}

// A unit rolled back after its append (the commit failed) takes its lines with it.
TEST_F(ServerCsvSinkTest, ARolledBackUnitLeavesNothing) {
  open_sink();
  unit({0});
  exec("BEGIN IMMEDIATE");
  ASSERT_TRUE(sink_->write(frame(1)));
  ASSERT_TRUE(sink_->before_commit());
  exec("ROLLBACK");
  sink_->rolled_back();
  EXPECT_EQ(csv(), expected({0}));
  unit({2});
  EXPECT_EQ(csv(), expected({0, 2}));
  EXPECT_EQ(count("SELECT end FROM server_csv_end WHERE file = 'dsekp'"),
            static_cast<std::int64_t>(expected({0, 2}).size()));
}

// Recording the end outside a transaction would commit it on its own, apart from the frames.
TEST_F(ServerCsvSinkTest, AUnitOutsideATransactionIsRefused) {
  open_sink();
  EXPECT_TRUE(sink_->write(frame(0)));  // staged only
  EXPECT_FALSE(sink_->before_commit());
  EXPECT_NE(sink_->refusal().find("transaction"), std::string::npos) << sink_->refusal();
  sink_->rolled_back();
  EXPECT_EQ(csv(), expected({}));
}

// A failed append (here the file size limit, as a full disk would) fails the unit, and what part
// of it reached the file is cut: the next unit's lines follow the committed ones.
TEST_F(ServerCsvSinkTest, AFailedAppendFailsTheUnitAndLeavesNothing) {
  open_sink();
  unit({0});
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = old_limit;
  limit.rlim_cur = expected({0}).size() + 20;  // part of the next row fits
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  exec("BEGIN IMMEDIATE");
  ASSERT_TRUE(sink_->write(frame(1)));
  const bool appended = sink_->before_commit();
  exec("ROLLBACK");
  sink_->rolled_back();
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(appended);
  EXPECT_NE(sink_->refusal().find("server_logs_dsekp.csv"), std::string::npos) << sink_->refusal();
  EXPECT_NE(sink_->refusal().find(std::strerror(EFBIG)), std::string::npos) << sink_->refusal();
  EXPECT_EQ(csv(), expected({0}));
  unit({2});
  EXPECT_EQ(csv(), expected({0, 2}));
}

// An edge upgraded after a kill between a commit and its append: the earlier version's journal
// puts the lines back once, and is dropped. Both journal formats: the first versions' (one
// record per line, no `rows`) and the last one's (a unit's lines of a file in one record).
TEST_F(ServerCsvSinkTest, AnEarlierVersionsJournalIsPutBackOnceAndDropped) {
  for (const bool with_rows : {false, true}) {
    SCOPED_TRACE(with_rows ? "records of several lines" : "one line per record");
    sink_.reset();
    std::filesystem::remove_all(logs_);
    std::filesystem::create_directories(logs_);
    exec("DROP TABLE IF EXISTS server_csv_end");
    open_sink();  // creates the files with their headers
    unit({0});
    sink_.reset();
    // An end recorded before a downgrade: the old version wrote after it, so it is stale.
    exec("UPDATE server_csv_end SET end = end - 10");
    exec(with_rows ? "CREATE TABLE server_csv_journal(id INTEGER PRIMARY KEY AUTOINCREMENT,"
                     " file TEXT NOT NULL, offset INTEGER NOT NULL, line BLOB NOT NULL,"
                     " rows INTEGER NOT NULL DEFAULT 1)"
                   : "CREATE TABLE server_csv_journal(id INTEGER PRIMARY KEY AUTOINCREMENT,"
                     " file TEXT NOT NULL, offset INTEGER NOT NULL, line BLOB NOT NULL)");
    const std::string row1 = server_csv_row(frame(1), 1);
    const std::string row2 = server_csv_row(frame(2), 1);
    AcceptedFrame psk = frame(9);
    psk.mode = Mode::psk;
    const std::string psk_row = server_csv_row(psk, 1);
    const std::size_t end0 = expected({0}).size();
    const std::size_t psk_end = logs::header_line(logs::LogKind::server, Mode::psk).size();
    const auto insert = [&](const char* file, std::size_t offset, const std::string& lines,
                            int rows) {
      sqlite3_stmt* st = nullptr;
      ASSERT_EQ(sqlite3_prepare_v2(db_,
                                   with_rows ? "INSERT INTO server_csv_journal(file, offset, line,"
                                               " rows) VALUES(?1, ?2, ?3, ?4)"
                                             : "INSERT INTO server_csv_journal(file, offset, line)"
                                               " VALUES(?1, ?2, ?3)",
                                   -1, &st, nullptr),
                SQLITE_OK);
      sqlite3_bind_text(st, 1, file, -1, SQLITE_STATIC);
      sqlite3_bind_int64(st, 2, static_cast<sqlite3_int64>(offset));
      sqlite3_bind_blob(st, 3, lines.data(), static_cast<int>(lines.size()), SQLITE_STATIC);
      if (with_rows) sqlite3_bind_int(st, 4, rows);
      ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
      sqlite3_finalize(st);
    };
    if (with_rows) {
      insert("dsekp", end0, row1 + row2, 2);
    } else {
      insert("dsekp", end0, row1, 1);
      insert("dsekp", end0 + row1.size(), row2, 1);
    }
    insert("psk", psk_end, psk_row, 1);
    open_sink();
    EXPECT_EQ(sink_->repaired_rows(), 3u);
    EXPECT_EQ(sink_->cut_rows(), 0u);
    EXPECT_EQ(csv(), expected({0, 1, 2}));
    EXPECT_EQ(dsekp::test::read_file(logs_ + "/server_logs_psk.csv"),
              logs::header_line(logs::LogKind::server, Mode::psk) + psk_row);
    EXPECT_EQ(count("SELECT count(*) FROM sqlite_master WHERE name = 'server_csv_journal'"), 0);
    unit({3}, /*told=*/false);
    EXPECT_EQ(sink_->repaired_rows(), 0u);
    EXPECT_EQ(csv(), expected({0, 1, 2, 3}));
  }
}

// A file rotated or replaced while the edge was stopped is not the file its end was recorded
// for: it is appended to as it is, never cut, also when it is longer than the recorded end.
TEST_F(ServerCsvSinkTest, AFileReplacedWhileStoppedIsNeverCut) {
  open_sink();
  unit({0});
  sink_.reset();
  std::filesystem::rename(path_, path_ + ".1");
  const std::string other = expected({7, 8, 9});  // longer than the recorded end
  std::ofstream(path_) << other;
  open_sink();
  EXPECT_EQ(sink_->cut_rows(), 0u);
  EXPECT_EQ(csv(), other);
  unit({3});
  EXPECT_EQ(csv(), other + server_csv_row(frame(3), 1));
  EXPECT_EQ(dsekp::test::read_file(path_ + ".1"), expected({0}));
}

// The same inode with other bytes before the recorded end (a new file that reuses the inode
// number, or one rewritten in place) is not the recorded file either.
TEST_F(ServerCsvSinkTest, AFileThatNoLongerEndsAsRecordedIsNeverCut) {
  open_sink();
  unit({0});
  sink_.reset();
  const std::string other = expected({5, 6, 7});
  {
    std::fstream rewrite(path_, std::ios::in | std::ios::out | std::ios::binary);
    rewrite << other;  // same file, other content, longer
  }
  open_sink();
  EXPECT_EQ(sink_->cut_rows(), 0u);
  EXPECT_EQ(csv(), other);
}

// A state database restored from an older copy records an end a few units back: the lines after
// it were committed (the unit mark names the last unit, which did not start there), and are not
// cut.
TEST_F(ServerCsvSinkTest, AnEndFromAnOlderCopyOfTheDatabaseCutsNothing) {
  open_sink();
  unit({0});
  exec("CREATE TABLE copy AS SELECT * FROM server_csv_end");
  unit({1});
  unit({2, 3});
  sink_.reset();
  exec("DELETE FROM server_csv_end");
  exec("INSERT INTO server_csv_end SELECT * FROM copy");  // the restore
  open_sink();
  EXPECT_EQ(sink_->cut_rows(), 0u);
  EXPECT_EQ(csv(), expected({0, 1, 2, 3}));
  unit({4});
  EXPECT_EQ(csv(), expected({0, 1, 2, 3, 4}));
}

// A copy taken just before the last unit: that unit committed, and its mark was cleared, so
// nothing is cut either.
TEST_F(ServerCsvSinkTest, AnEndFromACopyOneUnitBackCutsNothing) {
  open_sink();
  unit({0});
  exec("CREATE TABLE copy AS SELECT * FROM server_csv_end");
  unit({1});
  sink_.reset();
  exec("DELETE FROM server_csv_end");
  exec("INSERT INTO server_csv_end SELECT * FROM copy");
  open_sink();
  EXPECT_EQ(sink_->cut_rows(), 0u);
  EXPECT_EQ(csv(), expected({0, 1}));
}

// The same restore after a unit that did not commit: its lines were not where the mark says (the
// copy's end is further back), so nothing is cut, the restored end being no proof of which
// lines committed.
TEST_F(ServerCsvSinkTest, AnOlderCopyAndAUnitKilledBeforeItsCommitCutNothing) {
  open_sink();
  unit({0});
  exec("CREATE TABLE copy AS SELECT * FROM server_csv_end");
  unit({1});
  killed_before_commit({2});
  exec("DELETE FROM server_csv_end");
  exec("INSERT INTO server_csv_end SELECT * FROM copy");
  open_sink();
  EXPECT_EQ(sink_->cut_rows(), 0u);
  EXPECT_EQ(csv(), expected({0, 1, 2}));
}

// After a rotation, the unit under way still writes into the renamed file; killed before its
// commit, its lines are cut there at the restart (the new file does not match the record).
TEST_F(ServerCsvSinkTest, AUnitKilledAfterARotationIsCutFromTheRenamedFile) {
  open_sink();
  unit({0});
  std::filesystem::rename(path_, path_ + ".1");
  sink_->reopen();
  killed_before_commit({1, 2});
  EXPECT_EQ(dsekp::test::read_file(path_ + ".1"), expected({0, 1, 2}));
  open_sink();
  EXPECT_EQ(sink_->cut_rows(), 2u);
  EXPECT_EQ(dsekp::test::read_file(path_ + ".1"), expected({0}));
  EXPECT_EQ(csv(), header());
  unit({1, 2});
  EXPECT_EQ(csv(), header() + server_csv_row(frame(1), 1) + server_csv_row(frame(2), 1));
}

// The new file's end is recorded on its own, before its first line: never while a transaction
// is open on the connection (it would commit or roll back with that transaction).
TEST_F(ServerCsvSinkTest, AReopenWaitsUntilNoTransactionIsOpen) {
  open_sink();
  unit({0});
  std::filesystem::rename(path_, path_ + ".1");
  sink_->reopen();
  exec("BEGIN IMMEDIATE");
  sink_->rolled_back();  // a unit that wrote nothing, ended while another transaction is open
  EXPECT_FALSE(std::filesystem::exists(path_));
  exec("ROLLBACK");
  sink_->rolled_back();
  EXPECT_EQ(csv(), header());
}

// Power loss can leave a file shorter than its committed lines, ending inside a line: start-up
// says so and cuts the torn line, so that the next line starts a line of its own.
TEST_F(ServerCsvSinkTest, AFileShorterThanItsCommittedLinesLosesOnlyItsTornLine) {
  open_sink();
  unit({0, 1, 2});
  sink_.reset();
  std::filesystem::resize_file(path_, expected({0, 1}).size() + 9);
  open_sink();
  EXPECT_EQ(csv(), expected({0, 1}));
  unit({3});
  EXPECT_EQ(csv(), expected({0, 1, 3}));
}

// logrotate renames the files and sends SIGHUP (reopen()): the unit under way ends in the
// renamed file, the next one starts the new file with its header.
TEST_F(ServerCsvSinkTest, ReopenStartsTheNewFileWithItsHeaderAfterTheUnitUnderWay) {
  open_sink();
  unit({0, 1});
  std::filesystem::rename(path_, path_ + ".1");
  sink_->reopen();
  unit({2});
  EXPECT_EQ(dsekp::test::read_file(path_ + ".1"), expected({0, 1, 2}));
  EXPECT_EQ(csv(), header());
  unit({3});
  EXPECT_EQ(csv(), header() + server_csv_row(frame(3), 1));
  unit({4}, /*told=*/false);  // the new file's end is recorded: nothing cut, nothing lost
  EXPECT_EQ(sink_->cut_rows(), 0u);
  EXPECT_EQ(csv(), header() + server_csv_row(frame(3), 1) + server_csv_row(frame(4), 1));
}

// A reopen that cannot create the new file is tried again after every unit; meanwhile the
// lines go on into the renamed file, and no unit fails.
TEST_F(ServerCsvSinkTest, AReopenThatFailsIsTriedAgainAfterEveryUnit) {
  open_sink();
  unit({0});
  std::filesystem::rename(path_, path_ + ".1");
  std::filesystem::create_directory(path_);  // the new file cannot be opened
  sink_->reopen();
  unit({1});
  unit({2});
  std::filesystem::remove(path_);
  unit({3});  // the reopen after it succeeds
  unit({4});
  EXPECT_EQ(dsekp::test::read_file(path_ + ".1"), expected({0, 1, 2, 3}));
  EXPECT_EQ(csv(), header() + server_csv_row(frame(4), 1));
}

// In a batch each message is a savepoint: undoing one drops exactly its lines from both files and
// gives back the counters (the end, and the per-second `throughput` count) as they were at it,
// also across a kill right after the commit.
TEST_F(ServerCsvSinkTest, ASavepointUndoesOnlyTheLinesWrittenAfterIt) {
  const auto in_second = [](std::uint32_t seq, Mode mode) {
    AcceptedFrame f = frame(seq);
    f.mode = mode;
    f.recvts_ms = 1'764'460'800'010 + seq;  // all in one second: throughput counts them
    f.recvts_us = f.recvts_ms * 1000;
    return f;
  };
  for (const bool told : {true, false}) {
    SCOPED_TRACE(told ? "committed()" : "killed after the commit");
    sink_.reset();
    std::filesystem::remove_all(logs_);
    std::filesystem::create_directories(logs_);
    exec("DROP TABLE IF EXISTS server_csv_end");
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
    if (told) {
      sink_->committed();
    } else {
      sink_.reset();
      open_sink();
      EXPECT_EQ(sink_->cut_rows(), 0u);
    }
    EXPECT_EQ(csv(), header() + server_csv_row(in_second(0, Mode::dsekp), 1));
    EXPECT_EQ(dsekp::test::read_file(logs_ + "/server_logs_psk.csv"),
              logs::header_line(logs::LogKind::server, Mode::psk) +
                  server_csv_row(in_second(1, Mode::psk), 1) +
                  server_csv_row(in_second(4, Mode::psk), 2));
  }
}

}  // namespace
}  // namespace dsekp::edge::sinks
