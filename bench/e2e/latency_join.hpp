// End-to-end latency in microseconds from the experiment's CSV logs: each DATA frame's row in the
// device's client log (its last column `sendts_us`, taken just before the publish call) is joined
// with the edge's row for the same frame in the server log (`recvts_us`, taken on delivery), by
// (dev_id, sessctr_id, seq), or (dev_id, seq) in PSK mode, which has no sessctr (docs/LOGS.md).
// Both stamps are Unix microseconds from the system clock of the same machine, so their
// difference is the send-to-receive time with no clock offset in it (a clock step during the run
// would show as negative or inflated latencies; negative ones are counted).
//
// The same join gives the delivery ratio: sent = distinct frames in the client log, received =
// those also in the server log. The CSV files are read with the analysis' streaming libcsv reader
// and its header lookup, so columns are found by name as for `dsekp analyze`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dsekp/mode.hpp"

namespace dsekp::bench::e2e {

/// Gap before a frame's arrival at the edge above which the edge counts as idle (see
/// JoinResult::idle_latency_us).
inline constexpr std::uint64_t kIdleGapUs = 1000;

struct JoinResult {
  std::uint64_t client_rows = 0;
  std::uint64_t server_rows = 0;
  std::uint64_t sent = 0;              // distinct frames in the client log
  std::uint64_t received = 0;          // distinct frames of the client log also in the server log
  std::uint64_t duplicates = 0;        // server rows beyond the first of their frame
  std::uint64_t unexpected = 0;        // server rows whose frame the client log lacks
  std::uint64_t negative = 0;          // received frames with recvts_us < sendts_us (clock step)
  std::uint64_t bad_rows = 0;          // rows of either file that could not be read (wrong field
                                       // count, a number that is not one, an empty dev_id)
  std::vector<std::string> first_bad;  // "FILE line N: reason", at most a few
  /// recvts_us - sendts_us of each received frame (its first arrival), in microseconds, in the
  /// order of the server log.
  std::vector<double> latency_us;
  /// The same for the frames that found the edge idle: received at least kIdleGapUs after the
  /// row before them in the server log (the edge logs in arrival order, one frame at a time, and
  /// takes far less than that per frame), so no earlier frame was still being handled. Their
  /// latency is the path device -> broker -> edge without waiting behind other frames.
  std::vector<double> idle_latency_us;

  /// received / sent (1.0 when nothing was sent).
  [[nodiscard]] double delivery_ratio() const {
    return sent == 0 ? 1.0 : static_cast<double>(received) / static_cast<double>(sent);
  }
};

/// Joins `client_log` with `server_log`, ignoring the first `skip_server_rows` data rows of the
/// server log (an edge appends every run of a mode to one file; a device truncates its client log
/// at start, so the rows before belong to earlier runs). Throws std::runtime_error naming the
/// file if one cannot be read, has no header or lacks a column (seq, dev_id, sessctr_id in DSEKP
/// mode, and sendts_us / recvts_us).
JoinResult join_logs(const std::filesystem::path& client_log,
                     const std::filesystem::path& server_log, Mode mode,
                     std::uint64_t skip_server_rows = 0);

/// Adds `more` to `total` (counts summed, latencies appended): several runs as one sample.
void accumulate(JoinResult& total, JoinResult&& more);

}  // namespace dsekp::bench::e2e
