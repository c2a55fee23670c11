// The paper's server logs as a sink: server_logs_psk.csv and server_logs_dsekp.csv in a logs
// directory (docs/LOGS.md), appended to after each commit.
//
// Not exactly-once, honestly: rows are staged in write() and appended (and flushed) only in
// committed(), after the SQLite commit. A crash between the commit and the append loses those
// rows from the CSV (never duplicates them: a redelivered frame is a replay after the commit).
// The SQLite telemetry table (sqlite_telemetry_sink.hpp) is the exactly-once record. The
// exactly-once CSV scheme with a recorded file offset (ARCHITECTURE.md, durability step 3) is
// left for later.
//
// A file is created with its header when missing; an existing file is appended to (the header is
// written once). `throughput` counts per file from this process's start, so after a restart
// within the same second the running count starts again (analyze recomputes it anyway).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "edge/service/sink_writer.hpp"

namespace dsekp::edge::sinks {

class ServerCsvSink final : public SinkWriter {
 public:
  /// Opens (creating if needed) both files in `logs_dir`, which must exist. Throws
  /// std::runtime_error naming the file that cannot be opened.
  explicit ServerCsvSink(const std::string& logs_dir);
  ~ServerCsvSink() override;
  ServerCsvSink(const ServerCsvSink&) = delete;
  ServerCsvSink& operator=(const ServerCsvSink&) = delete;

  [[nodiscard]] bool write(const AcceptedFrame& row) override;
  void committed() noexcept override;
  void rolled_back() noexcept override { staged_.clear(); }

  /// Rows that could not be appended (disk full, I/O error) since the start.
  [[nodiscard]] std::uint64_t lost_rows() const noexcept { return lost_rows_; }

 private:
  struct File {
    std::FILE* fp = nullptr;
    std::string path;
    std::uint64_t bin = 0;    // bin_1s of the last row
    std::uint64_t count = 0;  // rows in that bin
  };
  static void open_file(File& file, const std::string& path, FrameMode mode);

  File psk_;
  File dsekp_;
  std::vector<AcceptedFrame> staged_;
  std::uint64_t lost_rows_ = 0;
};

}  // namespace dsekp::edge::sinks
