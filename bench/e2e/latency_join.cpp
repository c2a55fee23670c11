// Joining client and server logs into microsecond latencies (see latency_join.hpp).
#include "latency_join.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "analyze/csv_reader.hpp"
#include "analyze/error.hpp"
#include "analyze/log_schema.hpp"
#include "analyze/number_parse.hpp"

namespace dsekp::bench::e2e {
namespace {

constexpr std::uint64_t kMaxSeq = UINT32_MAX;
constexpr std::uint64_t kMaxSessctr = UINT16_MAX;
constexpr std::size_t kMaxListedBadRows = 5;

struct Sent {
  std::uint64_t sendts_us = 0;
  bool received = false;
};

using FrameMap = std::unordered_map<std::string, Sent>;

/// The frame's identity as one string; '\n' cannot occur in a dev_id (DevId's alphabet).
std::string frame_key(std::string_view dev_id, std::uint64_t sessctr, std::uint64_t seq) {
  std::string key(dev_id);
  key += '\n';
  key += std::to_string(sessctr);
  key += '/';
  key += std::to_string(seq);
  return key;
}

/// Reads one log: finds the columns (dev_id, seq, [sessctr_id], stamp) and hands each good row's
/// key and stamp to `row`. Counts and lists bad rows in `result`.
template <typename RowFn>
class JoinSink final : public analyze::CsvSink {
 public:
  JoinSink(std::string what, Mode mode, std::string_view stamp_column, std::uint64_t skip,
           JoinResult& result, std::uint64_t& rows, RowFn row)
      : what_(std::move(what)),
        mode_(mode),
        stamp_(stamp_column),
        skip_(skip),
        result_(result),
        rows_(rows),
        row_(std::move(row)) {}

  std::vector<bool> on_header(std::span<const std::string_view> names) override {
    std::vector<std::string_view> required = {"dev_id", "seq", stamp_};
    if (mode_ == Mode::dsekp) required.push_back("sessctr_id");
    lookup_ = analyze::lookup_columns(names, required, {}, what_);
    header_size_ = names.size();
    return lookup_.wanted;
  }

  void on_record(const analyze::CsvRecord& record) override {
    if (skipping()) return;
    ++rows_;
    if (record.field_count != header_size_) {
      bad(record.line, "has " + std::to_string(record.field_count) + " fields, the header has " +
                           std::to_string(header_size_));
      return;
    }
    const std::string_view dev_id = record.fields[lookup_.required[0]];
    const auto seq = analyze::parse_unsigned(record.fields[lookup_.required[1]], kMaxSeq);
    const auto stamp = analyze::parse_unsigned(record.fields[lookup_.required[2]]);
    std::optional<std::uint64_t> sessctr = 0;
    if (mode_ == Mode::dsekp)
      sessctr = analyze::parse_unsigned(record.fields[lookup_.required[3]], kMaxSessctr);
    if (dev_id.empty()) return bad(record.line, "empty dev_id");
    if (!seq) return bad(record.line, "seq is not a number in 0..4294967295");
    if (!sessctr) return bad(record.line, "sessctr_id is not a number in 0..65535");
    if (!stamp) return bad(record.line, std::string(stamp_) + " is not a whole number");
    row_(frame_key(dev_id, *sessctr, *seq), *stamp);
  }

  void on_malformed(std::uint64_t line, const std::string& reason) override {
    if (skipping()) return;
    ++rows_;
    bad(line, reason);
  }

 private:
  /// True for the first skip_ records (earlier runs' rows), which are not looked at.
  bool skipping() {
    if (skipped_ >= skip_) return false;
    ++skipped_;
    return true;
  }

  void bad(std::uint64_t line, const std::string& reason) {
    ++result_.bad_rows;
    if (result_.first_bad.size() < kMaxListedBadRows)
      result_.first_bad.push_back(what_ + " line " + std::to_string(line) + ": " + reason);
  }

  std::string what_;
  Mode mode_;
  std::string_view stamp_;
  std::uint64_t skip_ = 0;
  std::uint64_t skipped_ = 0;
  JoinResult& result_;
  std::uint64_t& rows_;
  RowFn row_;
  analyze::ColumnLookup lookup_;
  std::size_t header_size_ = 0;
};

template <typename RowFn>
void read_log(const std::filesystem::path& path, Mode mode, std::string_view stamp_column,
              std::uint64_t skip, JoinResult& result, std::uint64_t& rows, RowFn row) {
  if (!std::filesystem::exists(path)) throw std::runtime_error(path.string() + ": no such file");
  JoinSink<RowFn> sink(path.string(), mode, stamp_column, skip, result, rows, std::move(row));
  try {
    (void)analyze::read_csv(path, sink);
  } catch (const analyze::AnalyzeError& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace

JoinResult join_logs(const std::filesystem::path& client_log,
                     const std::filesystem::path& server_log, Mode mode,
                     std::uint64_t skip_server_rows) {
  JoinResult result;
  FrameMap sent;
  read_log(client_log, mode, "sendts_us", 0, result, result.client_rows,
           [&](std::string key, std::uint64_t sendts_us) {
             // A frame logged twice by the device would be a device bug; the first row counts.
             sent.try_emplace(std::move(key), Sent{sendts_us, false});
           });
  result.sent = sent.size();
  result.latency_us.reserve(sent.size());
  // The first row of the run had no frame before it in this run: the edge was idle.
  std::optional<std::uint64_t> previous_recvts;
  read_log(server_log, mode, "recvts_us", skip_server_rows, result, result.server_rows,
           [&](const std::string& key, std::uint64_t recvts_us) {
             const bool idle_edge = !previous_recvts || recvts_us >= *previous_recvts + kIdleGapUs;
             previous_recvts = recvts_us;
             const auto it = sent.find(key);
             if (it == sent.end()) {
               ++result.unexpected;
               return;
             }
             if (it->second.received) {
               ++result.duplicates;
               return;
             }
             it->second.received = true;
             ++result.received;
             const double latency =
                 static_cast<double>(recvts_us) - static_cast<double>(it->second.sendts_us);
             if (latency < 0) ++result.negative;
             result.latency_us.push_back(latency);
             if (idle_edge) result.idle_latency_us.push_back(latency);
           });
  return result;
}

void accumulate(JoinResult& total, JoinResult&& more) {
  total.client_rows += more.client_rows;
  total.server_rows += more.server_rows;
  total.sent += more.sent;
  total.received += more.received;
  total.duplicates += more.duplicates;
  total.unexpected += more.unexpected;
  total.negative += more.negative;
  total.bad_rows += more.bad_rows;
  for (auto& line : more.first_bad)
    if (total.first_bad.size() < kMaxListedBadRows) total.first_bad.push_back(std::move(line));
  total.latency_us.insert(total.latency_us.end(), more.latency_us.begin(), more.latency_us.end());
  total.idle_latency_us.insert(total.idle_latency_us.end(), more.idle_latency_us.begin(),
                               more.idle_latency_us.end());
}

}  // namespace dsekp::bench::e2e
