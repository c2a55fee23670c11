// Log kinds, file names and column lookup by header name (see log_schema.hpp, docs/LOGS.md).
#include "log_schema.hpp"

#include <array>

#include "error.hpp"

namespace dsekp::analyze {
namespace {

using namespace std::string_view_literals;

// Only the columns that enter a computation, each one of logs::columns() (a test checks it); the
// paper's other columns (timestamp, ciphertext, iv, tag, plaintext, bin_1s, throughput) are
// written by the edge/device and not read.
constexpr std::array kServerPsk = {"seq"sv, "dev_id"sv, "recvts_ms"sv, "latency_ms"sv,
                                   "payload_size"sv};
constexpr std::array kServerDsekp = {"seq"sv,       "dev_id"sv,     "sessctr_id"sv,
                                     "recvts_ms"sv, "latency_ms"sv, "payload_size"sv};
constexpr std::array kClientPsk = {"seq"sv, "dev_id"sv, "sendts_ms"sv, "payload_size"sv};
constexpr std::array kClientDsekp = {"seq"sv, "dev_id"sv, "sessctr_id"sv, "sendts_ms"sv,
                                     "payload_size"sv};
constexpr std::array kHandshakes = {"dev_id"sv,      "sessctr_id"sv, "init_sent_ms"sv,
                                    "ack_recv_ms"sv, "attempts"sv,   "outcome"sv};
constexpr std::array kServerOptional = {"sendts_ms"sv};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string join(std::span<const std::string_view> names) {
  std::string out;
  for (const auto name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

std::span<const std::string_view> required_columns(LogKind kind, Mode mode) {
  switch (kind) {
    case LogKind::server:
      return mode == Mode::psk ? std::span<const std::string_view>(kServerPsk)
                               : std::span<const std::string_view>(kServerDsekp);
    case LogKind::client:
      return mode == Mode::psk ? std::span<const std::string_view>(kClientPsk)
                               : std::span<const std::string_view>(kClientDsekp);
    case LogKind::handshakes:
      return kHandshakes;
  }
  return {};
}

std::span<const std::string_view> optional_columns(LogKind kind) {
  if (kind == LogKind::server) return kServerOptional;
  return {};
}

std::string_view micros_column(LogKind kind) {
  switch (kind) {
    case LogKind::server:
      return "recvts_us";
    case LogKind::client:
      return "sendts_us";
    case LogKind::handshakes:
      return {};
  }
  return {};
}

ColumnLookup lookup_columns(std::span<const std::string_view> header,
                            std::span<const std::string_view> required,
                            std::span<const std::string_view> optional, std::string_view what) {
  ColumnLookup lookup;
  lookup.wanted.assign(header.size(), false);
  const auto find = [&](std::string_view name) {
    std::size_t found = kNoColumn;
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (trim(header[i]) != name) continue;
      if (found != kNoColumn)
        throw AnalyzeError(std::string(what) + ": column '" + std::string(name) +
                           "' appears twice in the header (columns " + std::to_string(found + 1) +
                           " and " + std::to_string(i + 1) + ")");
      found = i;
    }
    if (found != kNoColumn) lookup.wanted[found] = true;
    return found;
  };
  std::vector<std::string_view> missing;
  for (const auto name : required) {
    lookup.required.push_back(find(name));
    if (lookup.required.back() == kNoColumn) missing.push_back(name);
  }
  for (const auto name : optional) lookup.optional.push_back(find(name));
  if (!missing.empty()) {
    std::vector<std::string_view> trimmed;
    for (const auto h : header) trimmed.push_back(trim(h));
    throw AnalyzeError(std::string(what) + ": missing column" + (missing.size() > 1 ? "s " : " ") +
                       join(missing) + " (the header has: " + join(trimmed) +
                       "; see docs/LOGS.md)");
  }
  return lookup;
}

}  // namespace dsekp::analyze
