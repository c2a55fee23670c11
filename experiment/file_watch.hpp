// Watching files that children write: relaying a device's output (its live progress line) to our
// terminal as it grows, and counting the rows of a CSV log as the edge appends them (to know when
// the edge has logged every frame a device had acknowledged).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace dsekp::experiment {

/// Copies what was appended to a file since the last call to a stream.
class FileFollower {
 public:
  explicit FileFollower(std::string path) : path_(std::move(path)) {}
  /// Copies the new bytes (if any) to `out` and flushes it.
  void pump(std::FILE* out);
  /// A final pump, then a newline if the last byte copied was not one (a progress line ends
  /// with '\r').
  void finish(std::FILE* out);

 private:
  std::string path_;
  std::uint64_t offset_ = 0;
  char last_ = '\n';
};

/// Counts the data rows (lines after the header) of a CSV file that is being appended to. Rows
/// are counted by line ends: the logs' fields never contain one (docs/LOGS.md writers quote JSON
/// but emit no line breaks inside fields).
class CsvRowCounter {
 public:
  explicit CsvRowCounter(std::string path) : path_(std::move(path)) {}
  /// Rows so far (0 while the file is missing or holds only its header).
  std::uint64_t rows();

 private:
  std::string path_;
  std::uint64_t offset_ = 0;
  std::uint64_t lines_ = 0;
};

}  // namespace dsekp::experiment
