// Reading one log file into per-row numbers: the server and client data logs and the DSEKP
// handshake log (docs/LOGS.md). Rows are checked field by field; a row that fails a check is a bad
// row: excluded from every figure, counted, and listed with its line number (the first
// `bad_rows_listed` per file), never dropped silently.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "log_schema.hpp"
#include "payload.hpp"
#include "throughput.hpp"

namespace dsekp::analyze {

struct BadRow {
  std::uint64_t line = 0;
  std::string reason;
};

/// What reading one file found, for the report and summary.json.
struct FileReport {
  std::string path;
  LogKind kind = LogKind::server;
  Mode mode = Mode::psk;
  std::uint64_t bytes = 0;
  std::uint64_t rows = 0;       // data rows (header and blank lines excluded)
  std::uint64_t good_rows = 0;  // rows that enter the analysis
  std::uint64_t bad_rows = 0;
  std::vector<BadRow> first_bad_rows;
  std::uint64_t blank_lines = 0;
  bool has_sendts = false;  // server log: latency_ms was checked against recvts_ms - sendts_ms
  // The µs column (micros_column(kind)) is in the header. Its bad values make a row bad for the
  // µs latency table only (latency_us.hpp): counted here, not in bad_rows.
  bool has_micros = false;
  std::uint64_t micros_bad_rows = 0;
  std::vector<BadRow> first_micros_bad_rows;
};

/// Reliability key of a packet: (device index << 48) | (sessctr << 32) | seq. PSK has sessctr 0.
inline std::uint64_t packet_key(std::uint16_t device, std::uint16_t sessctr, std::uint32_t seq) {
  return (std::uint64_t{device} << 48) | (std::uint64_t{sessctr} << 32) | seq;
}
inline std::uint16_t key_device(std::uint64_t key) {
  return static_cast<std::uint16_t>(key >> 48);
}
inline std::uint16_t key_sessctr(std::uint64_t key) {
  return static_cast<std::uint16_t>(key >> 32);
}

/// A row's packet key with its µs timestamp (recvts_us or sendts_us); kNoMicros when the row's
/// µs value was bad (client rows only: a bad server stamp is simply not stored).
inline constexpr std::uint64_t kNoMicros = UINT64_MAX;
struct MicroStamp {
  std::uint64_t key = 0;
  std::uint64_t us = kNoMicros;
};

struct ServerLogData {
  FileReport report;
  std::vector<std::string> devices;  // device index (in keys) -> dev_id, local to this file
  std::vector<std::uint64_t> keys;   // per good row
  std::vector<double> latencies_ms;  // per good row, latency_ms
  std::uint64_t negative_latencies = 0;
  PayloadHistogram payload;
  std::vector<SecondCount> bins;
  std::vector<MicroStamp> micros;  // good rows with a good recvts_us (report.has_micros)
};

struct ClientLogData {
  FileReport report;
  std::vector<std::string> devices;
  std::vector<std::uint64_t> keys;  // per good row
  PayloadHistogram payload;
  double first_sendts_ms = 0;
  double last_sendts_ms = 0;
  std::vector<MicroStamp> micros;  // per good row when report.has_micros (bad sendts_us: kNoMicros)
};

enum class HandshakeOutcome : std::uint8_t { ok, timeout, rejected };

struct HandshakeRecord {
  std::uint16_t device = 0;  // index into HandshakeLogData::devices
  std::uint16_t sessctr = 0;
  HandshakeOutcome outcome = HandshakeOutcome::ok;
  std::uint32_t attempts = 1;
  double latency_ms = 0;  // ack_recv_ms - init_sent_ms; meaningful when has_ack
  bool has_ack = false;
};

struct HandshakeLogData {
  FileReport report;
  std::vector<std::string> devices;
  std::vector<HandshakeRecord> records;
};

struct ReadOptions {
  std::size_t bad_rows_listed = 20;  // per file
};

/// Each throws AnalyzeError for an unreadable or empty file, a missing column, a file whose rows
/// are all bad, or more than 65,536 distinct dev_id values.
ServerLogData read_server_log(const std::filesystem::path& path, Mode mode,
                              const ReadOptions& options);
ClientLogData read_client_log(const std::filesystem::path& path, Mode mode,
                              const ReadOptions& options);
HandshakeLogData read_handshake_log(const std::filesystem::path& path, const ReadOptions& options);

}  // namespace dsekp::analyze
