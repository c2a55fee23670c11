// Streaming RFC 4180 reading on libcsv (Debian libcsv-dev): the file is read in 1 MiB chunks and
// handed to the sink one record at a time, so memory does not grow with the file. The reader
// tracks the line on which each record starts (quoted fields may span lines) so that bad rows can
// be reported by line number.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

namespace dsekp::analyze {

/// One data record. `fields` has one entry per header column; the text of a column is present
/// only if the sink asked for it in on_header (others, and columns missing from a short record,
/// are empty views). Views are valid only during on_record.
struct CsvRecord {
  std::uint64_t line = 0;       // 1-based line on which the record starts
  std::size_t field_count = 0;  // fields the record actually has
  std::span<const std::string_view> fields;
};

class CsvSink {
 public:
  virtual ~CsvSink() = default;
  /// The header: the first non-blank record (a UTF-8 byte-order mark is removed). Returns, per
  /// header column, whether on_record needs that column's text; skipping the others saves copies.
  virtual std::vector<bool> on_header(std::span<const std::string_view> names) = 0;
  virtual void on_record(const CsvRecord& record) = 0;
  /// A record that is not valid CSV (a stray quote, or a quoted field still open at the end of
  /// the file, e.g. a log cut off mid-row). Reading goes on at the next line.
  virtual void on_malformed(std::uint64_t line, const std::string& reason) = 0;
};

struct CsvFileStats {
  std::uint64_t bytes = 0;
  std::uint64_t records = 0;      // data records, header excluded (malformed ones included)
  std::uint64_t blank_lines = 0;  // skipped; not rows
};

/// Reads `path` into `sink`. Throws AnalyzeError if the file cannot be read or has no valid header
/// (empty file). Exceptions thrown by the sink stop the reading and are rethrown. Line numbers
/// count LF line ends (LF or CRLF files).
CsvFileStats read_csv(const std::filesystem::path& path, CsvSink& sink);

}  // namespace dsekp::analyze
