// The streaming CSV layer: RFC 4180 quoting (commas, doubled quotes, newlines inside fields),
// line numbers that count the newlines inside quoted fields, CRLF, blank lines, BOM, and errors
// for empty files and unterminated quotes.
#include "csv_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error.hpp"
#include "test_support.hpp"

namespace dsekp::analyze {
namespace {

using testing::TempDir;
using testing::write_file;

struct Row {
  std::uint64_t line;
  std::size_t field_count;
  std::vector<std::string> fields;
};

// Collects everything; reads only the columns named in `wanted_names` (all if empty).
class Collect : public CsvSink {
 public:
  explicit Collect(std::vector<std::string> wanted_names = {})
      : wanted_names_(std::move(wanted_names)) {}
  std::vector<bool> on_header(std::span<const std::string_view> names) override {
    for (const auto n : names) header.emplace_back(n);
    std::vector<bool> wanted;
    for (const auto n : names)
      wanted.push_back(wanted_names_.empty() ||
                       std::find(wanted_names_.begin(), wanted_names_.end(), n) !=
                           wanted_names_.end());
    return wanted;
  }
  void on_record(const CsvRecord& r) override {
    Row row{r.line, r.field_count, {}};
    for (const auto f : r.fields) row.fields.emplace_back(f);
    rows.push_back(row);
  }
  void on_malformed(std::uint64_t line, const std::string& reason) override {
    malformed.emplace_back(line, reason);
  }
  std::vector<std::string> header;
  std::vector<Row> rows;
  std::vector<std::pair<std::uint64_t, std::string>> malformed;

 private:
  std::vector<std::string> wanted_names_;
};

TEST(CsvReader, QuotedFieldsWithCommasQuotesAndNewlines) {
  TempDir dir;
  const auto path = write_file(dir / "a.csv",
                               "seq,plaintext,dev_id\n"
                               "1,\"{\"\"t\"\":24.0,\"\"h\"\":51.0}\",esp32-01\n"
                               "2,\"two\nlines\",esp32-02\n"
                               "3,plain,esp32-03\n");
  Collect sink;
  const auto stats = read_csv(path, sink);
  EXPECT_EQ(stats.records, 3u);
  ASSERT_EQ(sink.header, (std::vector<std::string>{"seq", "plaintext", "dev_id"}));
  ASSERT_EQ(sink.rows.size(), 3u);
  EXPECT_EQ(sink.rows[0].fields[1], R"({"t":24.0,"h":51.0})");
  EXPECT_EQ(sink.rows[0].line, 2u);
  EXPECT_EQ(sink.rows[1].fields[1], "two\nlines");
  EXPECT_EQ(sink.rows[1].line, 3u);
  // The quoted newline moved the next record one line down.
  EXPECT_EQ(sink.rows[2].line, 5u);
  EXPECT_EQ(sink.rows[2].fields[2], "esp32-03");
}

TEST(CsvReader, CrlfBlankLinesAndByteOrderMark) {
  TempDir dir;
  const auto path = write_file(dir / "a.csv", "\xEF\xBB\xBFseq,dev_id\r\n1,a\r\n\r\n2,b\r\n\n3,c");
  Collect sink;
  const auto stats = read_csv(path, sink);
  EXPECT_EQ(sink.header[0], "seq");
  ASSERT_EQ(sink.rows.size(), 3u);
  EXPECT_EQ(sink.rows[0].line, 2u);
  EXPECT_EQ(sink.rows[1].line, 4u);
  EXPECT_EQ(sink.rows[2].line, 6u);
  EXPECT_EQ(sink.rows[2].fields[1], "c");  // last line without a line end
  EXPECT_EQ(stats.blank_lines, 2u);
}

TEST(CsvReader, OnlyWantedColumnsAreFilledAndFieldCountIsReported) {
  TempDir dir;
  const auto path = write_file(dir / "a.csv", "a,b,c\n1,2,3\n4,5\n6,7,8,9\n");
  Collect sink({"c"});
  read_csv(path, sink);
  ASSERT_EQ(sink.rows.size(), 3u);
  EXPECT_EQ(sink.rows[0].fields, (std::vector<std::string>{"", "", "3"}));
  EXPECT_EQ(sink.rows[1].field_count, 2u);
  EXPECT_EQ(sink.rows[1].fields, (std::vector<std::string>{"", "", ""}));
  EXPECT_EQ(sink.rows[2].field_count, 4u);
  EXPECT_EQ(sink.rows[2].fields.size(), 3u);  // one entry per header column
}

TEST(CsvReader, LargeFileAcrossChunkBoundaries) {
  TempDir dir;
  std::string text = "seq,payload\n";
  for (int i = 0; i < 60000; ++i)
    text +=
        std::to_string(i) + ",\"" + std::string(static_cast<std::size_t>(i % 50), 'x') + ",\"\n";
  const auto path = write_file(dir / "a.csv", text);
  Collect sink;
  read_csv(path, sink);
  ASSERT_EQ(sink.rows.size(), 60000u);
  for (int i = 0; i < 60000; i += 997) {
    EXPECT_EQ(sink.rows[static_cast<std::size_t>(i)].fields[0], std::to_string(i));
    EXPECT_EQ(sink.rows[static_cast<std::size_t>(i)].line, static_cast<std::uint64_t>(i) + 2);
    EXPECT_EQ(sink.rows[static_cast<std::size_t>(i)].fields[1].size(),
              static_cast<std::size_t>(i % 50) + 1);
  }
}

TEST(CsvReader, EmptyFileIsAnError) {
  TempDir dir;
  const auto path = write_file(dir / "empty.csv", "");
  Collect sink;
  try {
    read_csv(path, sink);
    FAIL() << "no error";
  } catch (const AnalyzeError& e) {
    EXPECT_NE(std::string(e.what()).find("empty file"), std::string::npos) << e.what();
  }
}

TEST(CsvReader, StrayQuotesMakeOneMalformedRecordAndReadingGoesOn) {
  TempDir dir;
  const auto path = write_file(dir / "a.csv",
                               "a,b\n"
                               "1,2\n"
                               "3,x\"y\n"       // quote inside an unquoted field
                               "4,\"q\"tail\n"  // text after a closing quote
                               "5,6\n");
  Collect sink;
  const auto stats = read_csv(path, sink);
  ASSERT_EQ(sink.malformed.size(), 2u);
  EXPECT_EQ(sink.malformed[0].first, 3u);
  EXPECT_NE(sink.malformed[0].second.find("malformed quoting"), std::string::npos);
  EXPECT_EQ(sink.malformed[1].first, 4u);
  ASSERT_EQ(sink.rows.size(), 2u);
  EXPECT_EQ(sink.rows[1].line, 5u);
  EXPECT_EQ(sink.rows[1].fields[0], "5");
  EXPECT_EQ(stats.records, 4u);
}

TEST(CsvReader, UnterminatedQuoteAtTheEndIsOneMalformedRecord) {
  // What a log cut off in the middle of a quoted field looks like.
  TempDir dir;
  const auto path = write_file(dir / "a.csv", "a,b\n1,2\n3,\"open\n4,5\n");
  Collect sink;
  read_csv(path, sink);
  ASSERT_EQ(sink.rows.size(), 1u);
  ASSERT_EQ(sink.malformed.size(), 1u);
  EXPECT_EQ(sink.malformed[0].first, 3u);
  EXPECT_NE(sink.malformed[0].second.find("unterminated quoted field"), std::string::npos);
  EXPECT_NE(sink.malformed[0].second.find("lines 3 to 4"), std::string::npos)
      << sink.malformed[0].second;
}

TEST(CsvReader, MalformedHeaderIsAnError) {
  TempDir dir;
  const auto path = write_file(dir / "a.csv", "a,\"b\n1,2\n");
  Collect sink;
  EXPECT_THROW(read_csv(path, sink), AnalyzeError);
}

TEST(CsvReader, MissingFileIsAnError) {
  Collect sink;
  EXPECT_THROW(read_csv("/nonexistent/dir/file.csv", sink), AnalyzeError);
}

}  // namespace
}  // namespace dsekp::analyze
