// The rows of the paper's server logs (docs/LOGS.md, "Server logs"): the header line and one
// accepted frame as a CSV line, RFC 4180 quoting. Pure functions, so the format is testable
// without files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "edge/service/accepted_frame.hpp"

namespace dsekp::edge::sinks {

/// One row (with its LF), its fields in the order of logs::columns(LogKind::server, mode)
/// (logs/log_schema.hpp): the paper's, plus two of ours, `sendts_ms`, so that analyze can check
/// latency_ms = recvts_ms - sendts_ms, and last `recvts_us` (the reception time in Unix µs;
/// recvts_ms == recvts_us / 1000), for sub-millisecond latencies. `throughput` is the running count
/// of rows in this file with the same floor(recvts_ms / 1000), this row included.
[[nodiscard]] std::string server_csv_row(const AcceptedFrame& frame, std::uint64_t throughput);
/// The same row appended to `out` (the sink builds a unit's lines in one buffer per file).
void append_server_csv_row(std::string& out, const AcceptedFrame& frame, std::uint64_t throughput);
/// At least the length of that row, whatever the throughput.
[[nodiscard]] std::size_t server_csv_row_size_bound(const AcceptedFrame& frame) noexcept;

/// `field` as one CSV field: quoted (with inner quotes doubled) when it holds a comma, a quote or
/// a line break; as is otherwise.
[[nodiscard]] std::string csv_field(std::string_view field);

/// How a decrypted reading is written into the `plaintext` column (docs/LOGS.md): as is when it
/// is UTF-8 text without control characters (the JSON readings devices send), otherwise, and
/// whenever it starts with the prefix itself, kBinaryPlaintextPrefix + its standard base64. The
/// file stays UTF-8 text whatever an authenticated device encrypted; the telemetry table keeps
/// the exact bytes.
inline constexpr std::string_view kBinaryPlaintextPrefix = "base64:";
[[nodiscard]] std::string plaintext_column_text(ByteView plaintext);

/// Unix ms as ISO 8601 UTC with milliseconds, e.g. "2025-11-30T00:00:00.123Z".
[[nodiscard]] std::string iso8601_utc_ms(std::uint64_t unix_ms);
/// The same appended to `out`.
void append_iso8601_utc_ms(std::string& out, std::uint64_t unix_ms);

}  // namespace dsekp::edge::sinks
