// Server CSV rows (see server_csv_format.hpp).
#include "edge/sinks/server_csv_format.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>

#include "codec_simdjson/utf8.hpp"
#include "dsekp/bytes.hpp"
#include "edge/registry/text_encoding.hpp"

namespace dsekp::edge::sinks {

namespace {

bool needs_quotes(std::string_view field) noexcept {
  // One pass (find_first_of would search the four characters once per byte of the field).
  for (const char c : field)
    if (c == ',' || c == '"' || c == '\r' || c == '\n') return true;
  return false;
}

// Appends `field` as csv_field() would make it.
void append_csv_field(std::string& out, std::string_view field) {
  if (!needs_quotes(field)) {
    out += field;
    return;
  }
  out += '"';
  for (const char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_uint(std::string& out, std::uint64_t value) {
  char buf[20];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  (void)ec;  // 20 digits hold any uint64
  out.append(buf, end);
}

void append_int(std::string& out, std::int64_t value) {
  char buf[20];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  (void)ec;  // 20 characters hold any int64 with its sign
  out.append(buf, end);
}

// Whether the reading goes into the column as is (plaintext_column_text()).
bool plaintext_is_text(std::string_view text) noexcept {
  if (!is_valid_utf8(text) || text.starts_with(kBinaryPlaintextPrefix)) return false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return false;  // C0 controls and DEL: not in a reading
  }
  return true;
}

}  // namespace

std::string csv_field(std::string_view field) {
  std::string out;
  append_csv_field(out, field);
  return out;
}

std::string plaintext_column_text(ByteView plaintext) {
  const std::string_view text(reinterpret_cast<const char*>(plaintext.data()), plaintext.size());
  if (plaintext_is_text(text)) return std::string(text);
  return std::string(kBinaryPlaintextPrefix) + to_base64(plaintext);
}

void append_iso8601_utc_ms(std::string& out, std::uint64_t unix_ms) {
  // A row's seconds repeat for a whole second of rows: formatted once per second per thread.
  thread_local std::uint64_t cached_second = ~std::uint64_t{0};
  thread_local char cached[48];
  thread_local std::size_t cached_size = 0;
  const std::uint64_t second = unix_ms / 1000;
  if (second != cached_second) {
    const auto seconds = static_cast<std::time_t>(second);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    const int n =
        std::snprintf(cached, sizeof cached, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    cached_size = n > 0 ? std::min(static_cast<std::size_t>(n), sizeof cached - 1) : 0;
    cached_second = second;
  }
  const auto ms = static_cast<unsigned>(unix_ms % 1000);
  const char tail[] = {'.', static_cast<char>('0' + ms / 100),
                       static_cast<char>('0' + ms / 10 % 10), static_cast<char>('0' + ms % 10),
                       'Z'};
  out.append(cached, cached_size);
  out.append(tail, sizeof tail);
}

std::string iso8601_utc_ms(std::uint64_t unix_ms) {
  std::string out;
  append_iso8601_utc_ms(out, unix_ms);
  return out;
}

std::size_t server_csv_row_size_bound(const AcceptedFrame& f) noexcept {
  // Eleven numbers of at most 20 characters, the timestamp, separators and quotes: under 320;
  // the dev_id at worst quoted with every character doubled; the plaintext at worst doubled
  // quotes, or the prefix and its base64 (4 characters per 3 bytes, padded): under 3 per byte.
  return 320 + 2 * f.dev_id.size() + f.ciphertext_b64.size() + f.iv_b64.size() + f.tag_b64.size() +
         3 * f.plaintext.size();
}

std::string server_csv_row(const AcceptedFrame& f, std::uint64_t throughput) {
  std::string row;
  append_server_csv_row(row, f, throughput);
  return row;
}

void append_server_csv_row(std::string& row, const AcceptedFrame& f, std::uint64_t throughput) {
  append_uint(row, f.seq);
  row += ',';
  append_iso8601_utc_ms(row, f.recvts_ms);
  row += ',';
  append_csv_field(row, f.dev_id);
  row += ',';
  if (f.mode == Mode::dsekp) {
    append_uint(row, f.sessctr);
    row += ',';
  }
  // Standard base64 never needs quoting. The fields are made by to_base64 or, for a row read
  // back from the shared store's pending rows, checked to be canonical base64 there
  // (accepted_frame_record.cpp).
  for (const std::string* b64 : {&f.ciphertext_b64, &f.iv_b64, &f.tag_b64}) {
    row += *b64;
    row += ',';
  }
  // LOGS.md: the plaintext (JSON) is always quoted, even when nothing in it would require it;
  // quoted, a field has its inner quotes doubled (the base64 form has none).
  const std::string_view text(reinterpret_cast<const char*>(f.plaintext.data()),
                              f.plaintext.size());
  row += '"';
  if (plaintext_is_text(text)) {
    for (const char c : text) {
      if (c == '"') row += '"';
      row += c;
    }
  } else {
    row += kBinaryPlaintextPrefix;
    std::string encoded = to_base64(ByteView(f.plaintext.data(), f.plaintext.size()));
    row += encoded;
    secure_wipe(MutableByteView(reinterpret_cast<std::uint8_t*>(encoded.data()), encoded.size()));
  }
  row += "\",";
  append_uint(row, f.recvts_ms);
  row += ',';
  append_int(row, f.latency_ms);
  for (const std::uint64_t n :
       {std::uint64_t{f.payload_size}, f.recvts_ms / 1000, throughput, f.sendts_ms, f.recvts_us}) {
    row += ',';
    append_uint(row, n);
  }
  row += '\n';
}

}  // namespace dsekp::edge::sinks
