// What `dsekp analyze` reads of the log files (logs/log_schema.hpp defines them, docs/LOGS.md is
// the contract): the columns analyze needs, found by header name so that column order does not
// matter and unknown extra columns are ignored.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "logs/log_schema.hpp"

namespace dsekp::analyze {

using logs::kind_name;
using logs::LogKind;
using logs::standard_file_name;

/// The columns analyze reads from a log of `kind` in `mode`: all required.
std::span<const std::string_view> required_columns(LogKind kind, Mode mode);

/// Columns read when present (server log: sendts_ms, which lets analyze check latency_ms).
std::span<const std::string_view> optional_columns(LogKind kind);

/// The optional microsecond timestamp of a data log (ours, docs/LOGS.md): "recvts_us" for the
/// server log, "sendts_us" for the client log, "" for the handshake log. Looked up apart from
/// optional_columns() because it feeds only the microsecond latency table (latency_us.hpp).
std::string_view micros_column(LogKind kind);

inline constexpr std::size_t kNoColumn = static_cast<std::size_t>(-1);

/// Where each requested column is in a header, and which header columns to read.
struct ColumnLookup {
  std::vector<std::size_t> required;  // header position per required column, in the given order
  std::vector<std::size_t> optional;  // header position per optional column, or kNoColumn
  std::vector<bool> wanted;           // per header column: read its text
};

/// Finds `required` and `optional` names in `header` (exact, case-sensitive match after trimming
/// spaces). Throws AnalyzeError naming every missing required column and the header that was
/// found, or if a column we read appears twice. `what` names the file in the message.
ColumnLookup lookup_columns(std::span<const std::string_view> header,
                            std::span<const std::string_view> required,
                            std::span<const std::string_view> optional, std::string_view what);

}  // namespace dsekp::analyze
