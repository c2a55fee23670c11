// Server CSV rows (see server_csv_format.hpp).
#include "edge/sinks/server_csv_format.hpp"

#include <cstdio>
#include <ctime>

#include "codec_simdjson/utf8.hpp"
#include "edge/registry/text_encoding.hpp"

namespace dsekp::edge::sinks {

std::string server_csv_header(FrameMode mode) {
  if (mode == FrameMode::psk)
    return "seq,timestamp,dev_id,ciphertext,iv,tag,plaintext,recvts_ms,latency_ms,payload_size,"
           "bin_1s,throughput,sendts_ms,recvts_us\n";
  return "seq,timestamp,dev_id,sessctr_id,ciphertext,iv,tag,plaintext,recvts_ms,latency_ms,"
         "payload_size,bin_1s,throughput,sendts_ms,recvts_us\n";
}

std::string csv_field(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (const char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string plaintext_column_text(ByteView plaintext) {
  const std::string_view text(reinterpret_cast<const char*>(plaintext.data()), plaintext.size());
  bool as_text = is_valid_utf8(text) && !text.starts_with(kBinaryPlaintextPrefix);
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) as_text = false;  // C0 controls and DEL: not in a reading
  }
  if (as_text) return std::string(text);
  return std::string(kBinaryPlaintextPrefix) + to_base64(plaintext);
}

std::string iso8601_utc_ms(std::uint64_t unix_ms) {
  const auto seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[64];  // room for any int the format could print
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<unsigned>(unix_ms % 1000));
  return buf;
}

std::string server_csv_row(const AcceptedFrame& f, std::uint64_t throughput) {
  const std::string plaintext = plaintext_column_text(f.plaintext);
  std::string row =
      std::to_string(f.seq) + ',' + iso8601_utc_ms(f.recvts_ms) + ',' + csv_field(f.dev_id) + ',';
  if (f.mode == FrameMode::dsekp) row += std::to_string(f.sessctr) + ',';
  row += csv_field(f.ciphertext_b64) + ',' + csv_field(f.iv_b64) + ',' + csv_field(f.tag_b64) + ',';
  // LOGS.md: the plaintext (JSON) is always quoted, even when nothing in it would require it.
  std::string quoted = csv_field(plaintext);
  if (quoted.empty() || quoted.front() != '"') quoted = '"' + quoted + '"';
  row += quoted + ',' + std::to_string(f.recvts_ms) + ',' + std::to_string(f.latency_ms) + ',' +
         std::to_string(f.payload_size) + ',' + std::to_string(f.recvts_ms / 1000) + ',' +
         std::to_string(throughput) + ',' + std::to_string(f.sendts_ms) + ',' +
         std::to_string(f.recvts_us) + '\n';
  return row;
}

}  // namespace dsekp::edge::sinks
