// The device side's CSV logs (docs/LOGS.md): client_logs_psk.csv / client_logs_dsekp.csv, one row
// per DATA frame published, and client_handshakes_dsekp.csv, one row per handshake.
//
// Columns and file names are logs/log_schema.hpp's: the paper's, in its order, plus `sendts_us`
// last in the data logs (ours: Unix microseconds, sendts_ms == sendts_us / 1000). Fields go through
// libcsv's csv_fwrite when they can need quoting (the reading text, which is JSON and therefore
// always quoted); numbers, base64 and dev_id (whose alphabet has no comma or quote) are written as
// they are, which is the same RFC 4180 output a CSV library's minimal-quoting writer gives. Rows
// are buffered (1 MiB stdio buffer) and reach the file on flush(), at the latest on close; there is
// no fsync per row. A write error is remembered and reported by flush()/close().
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsekp/bytes.hpp"
#include "dsekp/mode.hpp"

namespace dsekp::device {

/// Unix ms as ISO 8601 UTC with milliseconds, e.g. "2025-11-30T00:00:00.123Z".
[[nodiscard]] std::string iso8601_utc_ms(std::uint64_t unix_ms);

/// One published DATA frame.
struct ClientLogRow {
  std::uint32_t seq = 0;
  std::uint16_t sessctr = 0;  // DSEKP only
  std::string_view dev_id;
  std::string_view plaintext;
  ByteView iv;
  ByteView tag;
  ByteView ciphertext;
  std::uint64_t sendts_us = 0;  // sendts_ms = sendts_us / 1000
  std::size_t payload_size = 0;
};

enum class HandshakeOutcome : std::uint8_t { ok, timeout, rejected };
[[nodiscard]] const char* outcome_name(HandshakeOutcome outcome) noexcept;

/// One handshake, written when it ended.
struct HandshakeLogRow {
  std::string_view dev_id;
  std::uint16_t sessctr = 0;
  std::uint64_t init_sent_ms = 0;            // first INIT transmission, Unix ms
  std::optional<std::uint64_t> ack_recv_ms;  // only for ok
  std::uint32_t attempts = 1;
  HandshakeOutcome outcome = HandshakeOutcome::ok;
};

/// A CSV file being written: header on open, then rows.
class CsvLogFile {
 public:
  /// Creates (truncates) `path` and writes the header. Throws std::runtime_error naming the
  /// file if it cannot be created.
  CsvLogFile(const std::filesystem::path& path, std::span<const std::string_view> columns);
  ~CsvLogFile();
  CsvLogFile(const CsvLogFile&) = delete;
  CsvLogFile& operator=(const CsvLogFile&) = delete;

  /// Pushes buffered rows to the OS. False (with `error()`) if any write failed so far.
  bool flush();
  /// Flushes and closes; false on any write error. Later writes are ignored.
  bool close();
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::uint64_t rows() const noexcept { return rows_; }

 protected:
  void raw(std::string_view text);     // as is (no quoting needed)
  void quoted(std::string_view text);  // through libcsv: quoted, inner quotes doubled
  void number(std::uint64_t value);
  void base64(ByteView bytes);
  void comma() { raw(","); }
  void end_row();

 private:
  void note_error(const char* what);

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  std::string error_;
  std::uint64_t rows_ = 0;
};

class ClientLogWriter : public CsvLogFile {
 public:
  ClientLogWriter(const std::filesystem::path& path, Mode mode);
  void write(const ClientLogRow& row);

 private:
  Mode mode_;
};

class HandshakeLogWriter : public CsvLogFile {
 public:
  explicit HandshakeLogWriter(const std::filesystem::path& path);
  void write(const HandshakeLogRow& row);
};

}  // namespace dsekp::device
