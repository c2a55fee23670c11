// Watching the children's files (experiment/file_watch.hpp): CSV rows counted as they are
// appended, and a device's output relayed incrementally (a trailing progress line gets its
// newline).
#include "experiment/file_watch.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.hpp"

namespace dsekp::experiment {
namespace {

using test::TempDir;

TEST(FileWatch, CsvRowCounterCountsAppendedRows) {
  TempDir dir;
  const std::string path = dir.file("server_logs_psk.csv");
  CsvRowCounter rows(path);
  EXPECT_EQ(rows.rows(), 0u);  // missing file
  std::ofstream out(path);
  out << "seq,timestamp,dev_id\n" << std::flush;
  EXPECT_EQ(rows.rows(), 0u);  // header only
  out << "0,t,esp32-01\n1,t,esp32-01\n" << std::flush;
  EXPECT_EQ(rows.rows(), 2u);
  out << "2,t,esp" << std::flush;  // a row being written
  EXPECT_EQ(rows.rows(), 2u);
  out << "32-01\n" << std::flush;
  EXPECT_EQ(rows.rows(), 3u);
}

TEST(FileWatch, FollowerRelaysNewBytesOnce) {
  TempDir dir;
  const std::string path = dir.file("device.log");
  FileFollower follow(path);
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  follow.pump(sink);  // nothing yet
  std::ofstream out(path);
  out << "line one\n" << std::flush;
  follow.pump(sink);
  out << "\rsent 10 acked 10" << std::flush;
  follow.pump(sink);
  follow.finish(sink);  // adds the newline the progress line lacks
  std::rewind(sink);
  char buf[256] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, sink);
  std::fclose(sink);
  EXPECT_EQ(std::string(buf, n), "line one\n\rsent 10 acked 10\n");
}

}  // namespace
}  // namespace dsekp::experiment
