// The client CSV logs (see client_logs.hpp).
#include "device/client_logs.hpp"

#include <csv.h>
#include <mbedtls/base64.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "dsekp/spec.hpp"
#include "logs/log_schema.hpp"

namespace dsekp::device {
namespace {

constexpr std::size_t kBufferSize = 1 << 20;

}  // namespace

const char* outcome_name(HandshakeOutcome outcome) noexcept {
  switch (outcome) {
    case HandshakeOutcome::ok:
      return "ok";
    case HandshakeOutcome::timeout:
      return "timeout";
    case HandshakeOutcome::rejected:
      return "rejected";
  }
  return "timeout";
}

std::string iso8601_utc_ms(std::uint64_t unix_ms) {
  const auto seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<unsigned>(unix_ms % 1000));
  return buf;
}

CsvLogFile::CsvLogFile(const std::filesystem::path& path, std::span<const std::string_view> columns)
    : path_(path), buffer_(kBufferSize) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr)
    throw std::runtime_error(path.string() + ": cannot create: " + std::strerror(errno));
  std::setvbuf(file_, buffer_.data(), _IOFBF, buffer_.size());
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) comma();
    raw(columns[i]);
  }
  raw("\n");
}

CsvLogFile::~CsvLogFile() {
  close();
}

void CsvLogFile::note_error(const char* what) {
  if (error_.empty()) error_ = path_.string() + ": " + what + ": " + std::strerror(errno);
}

void CsvLogFile::raw(std::string_view text) {
  if (file_ == nullptr || text.empty()) return;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) note_error("write failed");
}

void CsvLogFile::quoted(std::string_view text) {
  if (file_ == nullptr) return;
  if (csv_fwrite(file_, text.data(), text.size()) != 0) note_error("write failed");
}

void CsvLogFile::number(std::uint64_t value) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  raw(std::string_view(buf, static_cast<std::size_t>(end - buf)));
}

void CsvLogFile::base64(ByteView bytes) {
  // The largest field is a full-size ciphertext.
  std::array<unsigned char, (kMaxPayloadSize + 2) / 3 * 4 + 1> out{};
  std::size_t written = 0;
  if (mbedtls_base64_encode(out.data(), out.size(), &written, bytes.data(), bytes.size()) != 0) {
    if (error_.empty()) error_ = path_.string() + ": base64 field too large";
    return;
  }
  raw(std::string_view(reinterpret_cast<const char*>(out.data()), written));
}

void CsvLogFile::end_row() {
  raw("\n");
  ++rows_;
}

bool CsvLogFile::flush() {
  if (file_ != nullptr && std::fflush(file_) != 0) note_error("write failed");
  return error_.empty();
}

bool CsvLogFile::close() {
  if (file_ != nullptr) {
    if (std::fflush(file_) != 0) note_error("write failed");
    if (std::fclose(file_) != 0) note_error("close failed");
    file_ = nullptr;
  }
  return error_.empty();
}

ClientLogWriter::ClientLogWriter(const std::filesystem::path& path, Mode mode)
    : CsvLogFile(path, logs::columns(logs::LogKind::client, mode)), mode_(mode) {}

void ClientLogWriter::write(const ClientLogRow& r) {
  const std::uint64_t sendts_ms = r.sendts_us / 1000;
  number(r.seq);
  comma();
  if (mode_ == Mode::dsekp) {
    number(r.sessctr);
    comma();
  }
  raw(iso8601_utc_ms(sendts_ms));
  comma();
  raw(r.dev_id);  // [A-Za-z0-9._-]: never needs quoting
  comma();
  quoted(r.plaintext);  // JSON: always quoted (docs/LOGS.md)
  comma();
  base64(r.iv);
  comma();
  base64(r.tag);
  comma();
  base64(r.ciphertext);
  comma();
  number(sendts_ms);
  comma();
  number(r.payload_size);
  comma();
  number(r.sendts_us);
  end_row();
}

HandshakeLogWriter::HandshakeLogWriter(const std::filesystem::path& path)
    : CsvLogFile(path, logs::columns(logs::LogKind::handshakes, Mode::dsekp)) {}

void HandshakeLogWriter::write(const HandshakeLogRow& r) {
  raw(r.dev_id);
  comma();
  number(r.sessctr);
  comma();
  number(r.init_sent_ms);
  comma();
  if (r.ack_recv_ms) number(*r.ack_recv_ms);
  comma();
  number(r.attempts);
  comma();
  raw(outcome_name(r.outcome));
  end_row();
}

}  // namespace dsekp::device
