// CsvUnitMarks (see csv_unit_mark.hpp).
#include "edge/sinks/csv_unit_mark.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace dsekp::edge::sinks {
namespace {

constexpr std::size_t kFields = 6;
constexpr std::size_t kRecordSize = kFields * 8;

void put(std::uint8_t* out, std::uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t get(const std::uint8_t* in) noexcept {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | in[i];
  return v;
}

}  // namespace

CsvUnitMarks::CsvUnitMarks(const std::string& logs_dir) : path_(logs_dir + "/.server_csv_unit") {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error("cannot open " + path_ + ": " + std::strerror(errno));
  std::array<std::uint8_t, kRecordSize> record{};
  if (::pread(fd_, record.data(), record.size(), 0) == static_cast<ssize_t>(record.size())) {
    found_psk_ = {get(&record[0]), get(&record[8]), get(&record[16])};
    found_dsekp_ = {get(&record[24]), get(&record[32]), get(&record[40])};
  }
}

CsvUnitMarks::~CsvUnitMarks() {
  if (fd_ >= 0) ::close(fd_);
}

bool CsvUnitMarks::mark(const CsvUnitMark& psk, const CsvUnitMark& dsekp,
                        std::string& error) noexcept {
  std::array<std::uint8_t, kRecordSize> record{};
  const std::array<std::uint64_t, kFields> fields = {psk.inode,   psk.from,   psk.to,
                                                     dsekp.inode, dsekp.from, dsekp.to};
  for (std::size_t i = 0; i < kFields; ++i) put(&record[8 * i], fields[i]);
  if (::pwrite(fd_, record.data(), record.size(), 0) == static_cast<ssize_t>(record.size()))
    return true;
  error = "cannot write " + path_ + ": " + std::strerror(errno);
  return false;
}

}  // namespace dsekp::edge::sinks
