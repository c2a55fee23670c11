// repair_csv_file (see csv_repair.hpp).
#include "edge/sinks/csv_repair.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dsekp/bytes.hpp"
#include "edge/file_writes.hpp"

namespace dsekp::edge::sinks {
namespace {

bool file_size(int fd, std::uint64_t& size, std::string& error) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = std::string("fstat: ") + std::strerror(errno);
    return false;
  }
  size = static_cast<std::uint64_t>(st.st_size);
  return true;
}

bool present(int fd, const JournalLine& l, std::uint64_t size) {
  if (l.offset + l.line.size() > size) return false;
  std::string found(l.line.size(), '\0');
  std::size_t done = 0;
  while (done < found.size()) {
    const ssize_t n =
        ::pread(fd, found.data() + done, found.size() - done, static_cast<off_t>(l.offset + done));
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  const bool same = done == found.size() && found == l.line;
  secure_wipe(MutableByteView(reinterpret_cast<std::uint8_t*>(found.data()), found.size()));
  return same;
}

bool truncate_to(int fd, std::uint64_t size, std::string& error) {
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    error = std::string("ftruncate: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool append(int fd, const std::string& line, std::string& error) {
  if (write_all(fd, line)) return true;  // O_APPEND
  error = errno_text("write");
  return false;
}

}  // namespace

bool repair_csv_file(int fd, const std::vector<JournalLine>& lines, CsvRepairReport& report,
                     std::string& error) {
  report = CsvRepairReport{};
  std::uint64_t size = 0;
  if (!file_size(fd, size, error)) return false;
  std::size_t i = 0;
  while (i < lines.size() && present(fd, lines[i], size)) ++i;
  for (std::size_t k = 0; k < i; ++k) report.lines_present += lines[k].rows;
  if (i == lines.size()) {
    // Everything is in place; cut what follows the last journaled line (a torn write).
    if (!lines.empty()) {
      const std::uint64_t end = lines.back().offset + lines.back().line.size();
      if (size > end) {
        report.truncated_from = size;
        report.truncated_to = end;
        if (!truncate_to(fd, end, error)) return false;
        size = end;
      }
    }
    report.size = size;
    return true;
  }
  if (size >= lines[i].offset) {
    if (size > lines[i].offset) {
      report.truncated_from = size;
      report.truncated_to = lines[i].offset;
      if (!truncate_to(fd, lines[i].offset, error)) return false;
    }
  } else {
    report.appended_at_end = true;
  }
  for (; i < lines.size(); ++i) {
    if (!append(fd, lines[i].line, error)) return false;
    report.lines_appended += lines[i].rows;
  }
  if (::fsync(fd) != 0 && errno != EINVAL) {
    error = std::string("fsync: ") + std::strerror(errno);
    return false;
  }
  return file_size(fd, report.size, error);
}

}  // namespace dsekp::edge::sinks
