// The CSV logs of an experiment (docs/LOGS.md is the contract): their kinds, file names and
// columns in the order they are written. The one definition used by their writers (the edge's
// server logs, the device's client and handshake logs) and their reader (`dsekp analyze`).
//
// The columns are the paper's, in its order, plus ours at the end: sendts_ms in the server logs
// (the device's send time, carried in the frame), recvts_us / sendts_us (microsecond stamps), and
// the whole handshake log.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

#include "dsekp/mode.hpp"

namespace dsekp::logs {

enum class LogKind : std::uint8_t { server, client, handshakes };

/// "server log", "client log", "handshake log" (for messages).
[[nodiscard]] constexpr std::string_view kind_name(LogKind kind) noexcept {
  switch (kind) {
    case LogKind::server:
      return "server log";
    case LogKind::client:
      return "client log";
    case LogKind::handshakes:
      return "handshake log";
  }
  return "log";
}

/// The handshake log exists for DSEKP only.
inline constexpr std::string_view kHandshakeLogFileName = "client_handshakes_dsekp.csv";

/// server_logs_psk.csv, client_logs_dsekp.csv, client_handshakes_dsekp.csv (any mode).
[[nodiscard]] inline std::string standard_file_name(LogKind kind, Mode mode) {
  switch (kind) {
    case LogKind::server:
      return "server_logs_" + std::string(mode_name(mode)) + ".csv";
    case LogKind::client:
      return "client_logs_" + std::string(mode_name(mode)) + ".csv";
    case LogKind::handshakes:
      break;
  }
  return std::string(kHandshakeLogFileName);
}

namespace detail {
using namespace std::string_view_literals;
inline constexpr std::array kServerPsk = {
    "seq"sv,    "timestamp"sv,  "dev_id"sv,    "ciphertext"sv, "iv"sv,
    "tag"sv,    "plaintext"sv,  "recvts_ms"sv, "latency_ms"sv, "payload_size"sv,
    "bin_1s"sv, "throughput"sv, "sendts_ms"sv, "recvts_us"sv};
inline constexpr std::array kServerDsekp = {
    "seq"sv,          "timestamp"sv, "dev_id"sv,     "sessctr_id"sv, "ciphertext"sv,
    "iv"sv,           "tag"sv,       "plaintext"sv,  "recvts_ms"sv,  "latency_ms"sv,
    "payload_size"sv, "bin_1s"sv,    "throughput"sv, "sendts_ms"sv,  "recvts_us"sv};
inline constexpr std::array kClientPsk = {
    "seq"sv, "timestamp"sv,  "dev_id"sv,    "plaintext"sv,    "iv"sv,
    "tag"sv, "ciphertext"sv, "sendts_ms"sv, "payload_size"sv, "sendts_us"sv};
inline constexpr std::array kClientDsekp = {
    "seq"sv, "sessctr_id"sv, "timestamp"sv, "dev_id"sv,       "plaintext"sv, "iv"sv,
    "tag"sv, "ciphertext"sv, "sendts_ms"sv, "payload_size"sv, "sendts_us"sv};
inline constexpr std::array kHandshakes = {"dev_id"sv,      "sessctr_id"sv, "init_sent_ms"sv,
                                           "ack_recv_ms"sv, "attempts"sv,   "outcome"sv};
}  // namespace detail

/// The header of a log of `kind` in `mode`, in the order its writer writes the fields of a row
/// (the handshake log has one set of columns whatever the mode).
[[nodiscard]] constexpr std::span<const std::string_view> columns(LogKind kind,
                                                                  Mode mode) noexcept {
  switch (kind) {
    case LogKind::server:
      if (mode == Mode::psk) return detail::kServerPsk;
      return detail::kServerDsekp;
    case LogKind::client:
      if (mode == Mode::psk) return detail::kClientPsk;
      return detail::kClientDsekp;
    case LogKind::handshakes:
      break;
  }
  return detail::kHandshakes;
}

/// The header line, comma-separated and ended by LF (no column name needs quoting).
[[nodiscard]] inline std::string header_line(LogKind kind, Mode mode) {
  std::string line;
  for (const std::string_view column : columns(kind, mode)) {
    if (!line.empty()) line += ',';
    line += column;
  }
  line += '\n';
  return line;
}

}  // namespace dsekp::logs
