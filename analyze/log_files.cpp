// Server, client and handshake log readers (see log_files.hpp, docs/LOGS.md).
#include "log_files.hpp"

#include <array>
#include <cmath>
#include <cstdio>

#include "csv_reader.hpp"
#include "device_index.hpp"
#include "error.hpp"
#include "number_parse.hpp"

namespace dsekp::analyze {
namespace {

constexpr std::uint64_t kMaxSeq = UINT32_MAX;      // DATA seq is a u32 (PROTOCOL.md)
constexpr std::uint64_t kMaxSessctr = UINT16_MAX;  // sessctr is a u16
// latency_ms is rounded by some writers while the timestamps are not: allow that much.
constexpr double kLatencyTolerance_ms = 1.0;
// A µs stamp and the ms column of the same instant may differ by the ms writer's rounding (the
// ms value is floor(us / 1000)); more means the two columns do not describe the same instant.
constexpr double kMicrosTolerance_ms = 1.0;
// Unix µs fit in 2^53 until the year 2255; up to there they, and their differences, are exact
// doubles.
constexpr std::uint64_t kMaxMicros = std::uint64_t{1} << 53;

std::string quoted(std::string_view value) {
  constexpr std::size_t kMax = 40;
  std::string out = "'";
  out += value.substr(0, kMax);
  if (value.size() > kMax) out += "...";
  out += "'";
  return out;
}

// Shared part of the three readers: header lookup, field-count check, bad-row bookkeeping and
// the end-of-file checks. Subclasses check and store one row in parse_row.
class LogSink : public CsvSink {
 public:
  LogSink(const std::filesystem::path& path, LogKind kind, Mode mode, const ReadOptions& options)
      : path_(path), kind_(kind), mode_(mode), options_(options) {
    report.path = path.string();
    report.kind = kind;
    report.mode = mode;
  }

  std::vector<bool> on_header(std::span<const std::string_view> names) override {
    lookup_ =
        lookup_columns(names, required_columns(kind_, mode_), optional_columns(kind_), what());
    header_size_ = names.size();
    const std::string_view micros = micros_column(kind_);
    if (!micros.empty()) {
      const std::array<std::string_view, 1> name{micros};
      micros_position_ = lookup_columns(names, {}, name, what()).optional[0];
      report.has_micros = micros_position_ != kNoColumn;
      if (report.has_micros) lookup_.wanted[micros_position_] = true;
    }
    return lookup_.wanted;
  }

  void on_record(const CsvRecord& record) override {
    ++report.rows;
    if (record.field_count != header_size_) {
      bad(record.line, [&] {
        return "has " + std::to_string(record.field_count) + " fields, the header has " +
               std::to_string(header_size_);
      });
      return;
    }
    if (parse_row(record)) ++report.good_rows;
  }

  void on_malformed(std::uint64_t line, const std::string& reason) override {
    ++report.rows;
    bad(line, [&] { return reason; });
  }

  void read() {
    const CsvFileStats stats = read_csv(path_, *this);
    report.bytes = stats.bytes;
    report.blank_lines = stats.blank_lines;
    if (report.rows == 0) throw AnalyzeError(what() + ": no data rows (only a header)");
    if (report.good_rows == 0) {
      std::string first;
      if (!report.first_bad_rows.empty())
        first = " (first: line " + std::to_string(report.first_bad_rows.front().line) + ": " +
                report.first_bad_rows.front().reason + ")";
      throw AnalyzeError(what() + ": all " + std::to_string(report.rows) + " data rows are bad" +
                         first);
    }
  }

  FileReport report;

 protected:
  virtual bool parse_row(const CsvRecord& record) = 0;

  std::string what() const {
    std::string label = std::string(mode_label(mode_)) + " " + std::string(kind_name(kind_));
    if (kind_ == LogKind::handshakes) label = "handshake log";
    return label + " " + path_.string();
  }

  std::string_view field(const CsvRecord& record, std::size_t required_index) const {
    return record.fields[lookup_.required[required_index]];
  }
  std::size_t optional_position(std::size_t optional_index) const {
    return lookup_.optional[optional_index];
  }

  template <typename Reason>
  bool bad(std::uint64_t line, Reason&& reason) {
    ++report.bad_rows;
    if (report.first_bad_rows.size() < options_.bad_rows_listed)
      report.first_bad_rows.push_back({line, reason()});
    return false;
  }

  bool bad_field(std::uint64_t line, std::string_view column, std::string_view value,
                 const char* expected) {
    return bad(line,
               [&] { return std::string(column) + ": " + quoted(value) + " is not " + expected; });
  }

  // The three fields every log has, checked in one place.
  std::optional<std::uint16_t> device(const CsvRecord& record, std::size_t column) {
    const std::string_view dev_id = field(record, column);
    if (dev_id.empty()) {
      bad(record.line, [] { return std::string("dev_id is empty"); });
      return std::nullopt;
    }
    const auto index = devices_.find_or_add(dev_id);
    if (!index)
      throw AnalyzeError(what() + ": more than 65,536 distinct dev_id values (not supported)");
    return index;
  }

  std::optional<std::uint64_t> unsigned_field(const CsvRecord& record, std::size_t column,
                                              std::uint64_t max, const char* expected) {
    const std::string_view text = field(record, column);
    const auto value = parse_unsigned(text, max);
    if (!value) bad_field(record.line, required_columns(kind_, mode_)[column], text, expected);
    return value;
  }

  // The packet's identity within its device: seq (column 0) and, in DSEKP logs, sessctr_id
  // (column 2). Client and server logs share this column order (log_schema.cpp).
  struct PacketId {
    std::uint64_t seq = 0;
    std::uint64_t sessctr = 0;
  };
  std::optional<PacketId> packet_id(const CsvRecord& record, bool dsekp) {
    const auto seq = unsigned_field(record, 0, kMaxSeq, "a sequence number (0..4294967295)");
    if (!seq) return std::nullopt;
    PacketId id{*seq, 0};
    if (dsekp) {
      const auto sessctr = unsigned_field(record, 2, kMaxSessctr, "a session counter (0..65535)");
      if (!sessctr) return std::nullopt;
      id.sessctr = *sessctr;
    }
    return id;
  }

  std::optional<double> time_field(const CsvRecord& record, std::size_t column) {
    const std::string_view text = field(record, column);
    const auto value = parse_real(text);
    if (!value || *value < 0) {
      bad_field(record.line, required_columns(kind_, mode_)[column], text,
                "a Unix time in milliseconds");
      return std::nullopt;
    }
    return value;
  }

  // The row's µs stamp (report.has_micros only), checked against `ms` (the ms column `ms_name`
  // of the same instant): the value, or kNoMicros after recording a bad row for the µs table
  // only, whose reason says which check failed.
  std::uint64_t micros(const CsvRecord& record, double ms, std::string_view ms_name) {
    const std::string column(micros_column(kind_));
    const std::string_view text = record.fields[micros_position_];
    if (text.empty()) return micros_bad(record.line, [&] { return column + " is empty"; });
    const auto value = parse_unsigned(text, kMaxMicros);
    if (!value)
      return micros_bad(record.line, [&] {
        return column + ": " + quoted(text) + " is not a Unix time in whole microseconds";
      });
    const double off_ms = static_cast<double>(*value) / 1000.0 - ms;
    if (std::fabs(off_ms) > kMicrosTolerance_ms)
      return micros_bad(record.line, [&] {
        char off[32];
        std::snprintf(off, sizeof off, "%.3f", std::fabs(off_ms));
        return column + " / 1000 differs from " + std::string(ms_name) + " by " + off +
               " ms (more than 1 ms): " + column + " " + std::string(text);
      });
    return *value;
  }

  std::vector<std::string> take_devices() { return devices_.take_names(); }

 private:
  std::filesystem::path path_;
  LogKind kind_;
  Mode mode_;
  ReadOptions options_;
  ColumnLookup lookup_;
  std::size_t header_size_ = 0;
  std::size_t micros_position_ = kNoColumn;
  DeviceIndex devices_;

  template <typename Reason>
  std::uint64_t micros_bad(std::uint64_t line, Reason&& reason) {
    ++report.micros_bad_rows;
    if (report.first_micros_bad_rows.size() < options_.bad_rows_listed)
      report.first_micros_bad_rows.push_back({line, reason()});
    return kNoMicros;
  }
};

class ServerSink final : public LogSink {
 public:
  ServerSink(const std::filesystem::path& path, Mode mode, const ReadOptions& options)
      : LogSink(path, LogKind::server, mode, options), dsekp_(mode == Mode::dsekp) {}

  ServerLogData finish() {
    ServerLogData out;
    report.has_sendts = has_sendts_;
    out.report = std::move(report);
    out.devices = take_devices();
    out.keys = std::move(keys_);
    out.latencies_ms = std::move(latencies_);
    out.negative_latencies = negative_;
    out.payload = std::move(payload_);
    out.bins = bins_.finish();
    out.micros = std::move(micros_);
    return out;
  }

  std::vector<bool> on_header(std::span<const std::string_view> names) override {
    auto wanted = LogSink::on_header(names);
    has_sendts_ = optional_position(0) != kNoColumn;
    return wanted;
  }

 protected:
  bool parse_row(const CsvRecord& r) override {
    // Column order as in log_schema.cpp: seq, dev_id, [sessctr_id,] recvts_ms, latency_ms,
    // payload_size.
    const std::size_t base = dsekp_ ? 1 : 0;
    const auto id = packet_id(r, dsekp_);
    if (!id) return false;
    const auto recvts = time_field(r, 2 + base);
    if (!recvts) return false;
    const std::string_view latency_text = field(r, 3 + base);
    const auto latency = parse_real(latency_text);
    if (!latency) return bad_field(r.line, "latency_ms", latency_text, "a number of milliseconds");
    const auto payload = unsigned_field(r, 4 + base, UINT32_MAX, "a size in bytes");
    if (!payload) return false;
    if (has_sendts_) {
      const std::string_view sendts_text = r.fields[optional_position(0)];
      const auto sendts = parse_real(sendts_text);
      if (!sendts)
        return bad_field(r.line, "sendts_ms", sendts_text, "a Unix time in milliseconds");
      if (std::fabs(*recvts - *sendts - *latency) > kLatencyTolerance_ms)
        return bad(r.line, [&] {
          return "latency_ms " + std::string(latency_text) +
                 " differs from recvts_ms - sendts_ms = " + std::to_string(*recvts - *sendts);
        });
    }
    const auto dev = device(r, 1);
    if (!dev) return false;
    keys_.push_back(packet_key(*dev, static_cast<std::uint16_t>(id->sessctr),
                               static_cast<std::uint32_t>(id->seq)));
    if (report.has_micros) {
      const std::uint64_t us = micros(r, *recvts, "recvts_ms");
      if (us != kNoMicros) micros_.push_back({keys_.back(), us});
    }
    latencies_.push_back(*latency);
    if (*latency < 0) ++negative_;
    payload_.add(*payload);
    bins_.add(*recvts);
    return true;
  }

 private:
  bool dsekp_;
  bool has_sendts_ = false;
  std::vector<std::uint64_t> keys_;
  std::vector<double> latencies_;
  std::uint64_t negative_ = 0;
  PayloadHistogram payload_;
  ReceiveBins bins_;
  std::vector<MicroStamp> micros_;
};

class ClientSink final : public LogSink {
 public:
  ClientSink(const std::filesystem::path& path, Mode mode, const ReadOptions& options)
      : LogSink(path, LogKind::client, mode, options), dsekp_(mode == Mode::dsekp) {}

  ClientLogData finish() {
    ClientLogData out;
    out.report = std::move(report);
    out.devices = take_devices();
    out.keys = std::move(keys_);
    out.payload = std::move(payload_);
    out.first_sendts_ms = first_;
    out.last_sendts_ms = last_;
    out.micros = std::move(micros_);
    return out;
  }

 protected:
  bool parse_row(const CsvRecord& r) override {
    // Column order as in log_schema.cpp: seq, dev_id, [sessctr_id,] sendts_ms, payload_size.
    const std::size_t base = dsekp_ ? 1 : 0;
    const auto id = packet_id(r, dsekp_);
    if (!id) return false;
    const auto sendts = time_field(r, 2 + base);
    if (!sendts) return false;
    const auto payload = unsigned_field(r, 3 + base, UINT32_MAX, "a size in bytes");
    if (!payload) return false;
    const auto dev = device(r, 1);
    if (!dev) return false;
    keys_.push_back(packet_key(*dev, static_cast<std::uint16_t>(id->sessctr),
                               static_cast<std::uint32_t>(id->seq)));
    // Kept with kNoMicros when bad, so that the join can tell a bad sendts_us from a packet the
    // client log lacks.
    if (report.has_micros) micros_.push_back({keys_.back(), micros(r, *sendts, "sendts_ms")});
    payload_.add(*payload);
    if (keys_.size() == 1) first_ = last_ = *sendts;
    first_ = std::min(first_, *sendts);
    last_ = std::max(last_, *sendts);
    return true;
  }

 private:
  bool dsekp_;
  std::vector<std::uint64_t> keys_;
  PayloadHistogram payload_;
  double first_ = 0;
  double last_ = 0;
  std::vector<MicroStamp> micros_;
};

class HandshakeSink final : public LogSink {
 public:
  HandshakeSink(const std::filesystem::path& path, const ReadOptions& options)
      : LogSink(path, LogKind::handshakes, Mode::dsekp, options) {}

  HandshakeLogData finish() {
    HandshakeLogData out;
    out.report = std::move(report);
    out.devices = take_devices();
    out.records = std::move(records_);
    return out;
  }

 protected:
  bool parse_row(const CsvRecord& r) override {
    // Column order as in log_schema.cpp: dev_id, sessctr_id, init_sent_ms, ack_recv_ms,
    // attempts, outcome.
    const auto sessctr = unsigned_field(r, 1, kMaxSessctr, "a session counter (0..65535)");
    if (!sessctr) return false;
    const auto init_sent = time_field(r, 2);
    if (!init_sent) return false;
    const std::string_view ack_text = field(r, 3);
    std::optional<double> ack;
    if (!ack_text.empty()) {
      ack = time_field(r, 3);
      if (!ack) return false;
    }
    const auto attempts = unsigned_field(r, 4, UINT32_MAX, "a count of INIT transmissions");
    if (!attempts) return false;
    if (*attempts == 0) return bad(r.line, [] { return std::string("attempts is 0"); });
    const std::string_view outcome_text = field(r, 5);
    HandshakeOutcome outcome{};
    if (outcome_text == "ok") {
      outcome = HandshakeOutcome::ok;
    } else if (outcome_text == "timeout") {
      outcome = HandshakeOutcome::timeout;
    } else if (outcome_text == "rejected") {
      outcome = HandshakeOutcome::rejected;
    } else {
      return bad_field(r.line, "outcome", outcome_text, "one of ok, timeout, rejected");
    }
    if (outcome == HandshakeOutcome::ok && !ack)
      return bad(r.line, [] { return std::string("outcome ok without ack_recv_ms"); });
    if (outcome == HandshakeOutcome::timeout && ack)
      return bad(r.line, [] { return std::string("outcome timeout with an ack_recv_ms"); });
    if (ack && *ack < *init_sent)
      return bad(r.line, [] { return std::string("ack_recv_ms is before init_sent_ms"); });
    const auto dev = device(r, 0);
    if (!dev) return false;
    records_.push_back({*dev, static_cast<std::uint16_t>(*sessctr), outcome,
                        static_cast<std::uint32_t>(*attempts), ack ? *ack - *init_sent : 0.0,
                        ack.has_value()});
    return true;
  }

 private:
  std::vector<HandshakeRecord> records_;
};

}  // namespace

ServerLogData read_server_log(const std::filesystem::path& path, Mode mode,
                              const ReadOptions& options) {
  ServerSink sink(path, mode, options);
  sink.read();
  return sink.finish();
}

ClientLogData read_client_log(const std::filesystem::path& path, Mode mode,
                              const ReadOptions& options) {
  ClientSink sink(path, mode, options);
  sink.read();
  return sink.finish();
}

HandshakeLogData read_handshake_log(const std::filesystem::path& path, const ReadOptions& options) {
  HandshakeSink sink(path, options);
  sink.read();
  return sink.finish();
}

}  // namespace dsekp::analyze
