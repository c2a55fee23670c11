// ServerCsvSink (see server_csv_sink.hpp).
#include "edge/sinks/server_csv_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "dsekp/bytes.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/sinks/csv_journal.hpp"
#include "edge/sinks/csv_repair.hpp"
#include "edge/sinks/server_csv_format.hpp"
#include "logs/log_schema.hpp"

namespace dsekp::edge::sinks {
namespace {

// Makes room for `extra` more bytes, so that appending them does not let std::string move the
// buffer by itself: the old buffer, with the readings in it, would be freed unwiped.
void reserve_wiping(std::string& buffer, std::size_t extra) {
  if (buffer.capacity() - buffer.size() >= extra) return;
  std::string bigger;
  bigger.reserve(std::max(2 * buffer.capacity(), buffer.size() + extra));
  bigger.append(buffer);
  secure_wipe(MutableByteView(reinterpret_cast<std::uint8_t*>(buffer.data()), buffer.size()));
  buffer.swap(bigger);  // the old buffer, wiped, is freed with `bigger`
}

void wipe(std::string& buffer, std::size_t from) noexcept {
  if (buffer.size() <= from) return;
  secure_wipe(
      MutableByteView(reinterpret_cast<std::uint8_t*>(buffer.data()) + from, buffer.size() - from));
  buffer.resize(from);
}

// Writes all of `data` at the end of `fd` (O_APPEND); false with errno set.
bool write_all(int fd, const char* data, std::size_t size) noexcept {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool identify(int fd, CsvFileEnd& out) noexcept {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  out.device = static_cast<std::uint64_t>(st.st_dev);
  out.inode = static_cast<std::uint64_t>(st.st_ino);
  out.end = static_cast<std::uint64_t>(st.st_size);
  return true;
}

// Opens (creating if needed) the log at `path` for appending; a new file, or one cut inside its
// header (a kill while creating it), gets the header. Throws std::runtime_error naming the file.
CsvFileEnd open_log(const std::string& path, Mode mode, int& fd_out) {
  // The rows hold decrypted readings: owner only, whatever the umask (0600 on creation; an
  // existing file keeps the mode its operator gave it).
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    throw std::runtime_error("cannot open " + path + " for appending: " + std::strerror(errno));
  CsvFileEnd file;
  const std::string header = logs::header_line(logs::LogKind::server, mode);
  bool ok = identify(fd, file);
  if (ok && file.end < header.size())
    ok = ::ftruncate(fd, 0) == 0 && write_all(fd, header.data(), header.size()) &&
         identify(fd, file);
  if (!ok) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error("cannot write the header of " + path + ": " + std::strerror(error));
  }
  fd_out = fd;
  return file;
}

// Line breaks in [from, to) of `fd`.
std::uint64_t lines_between(int fd, std::uint64_t from, std::uint64_t to) {
  std::uint64_t lines = 0;
  std::vector<char> chunk(65536);
  while (from < to) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), to - from));
    const ssize_t n = ::pread(fd, chunk.data(), want, static_cast<off_t>(from));
    if (n <= 0) break;
    lines += static_cast<std::uint64_t>(std::count(chunk.begin(), chunk.begin() + n, '\n'));
    from += static_cast<std::uint64_t>(n);
  }
  return lines;
}

// The size of `fd`'s content up to and with its last line break, but not below `floor`: a file
// a power loss left with part of a line (or zeros) at its end is cut there.
std::uint64_t last_whole_line_end(int fd, std::uint64_t size, std::uint64_t floor) {
  char c = 0;
  std::uint64_t end = size;
  while (end > floor && (::pread(fd, &c, 1, static_cast<off_t>(end - 1)) != 1 || c != '\n')) --end;
  return end;
}

}  // namespace

ServerCsvSink::ServerCsvSink(const std::string& logs_dir, sqlite3* db) {
  psk_.path = logs_dir + "/" + logs::standard_file_name(logs::LogKind::server, Mode::psk);
  psk_.name = "psk";
  psk_.mode = Mode::psk;
  dsekp_.path = logs_dir + "/" + logs::standard_file_name(logs::LogKind::server, Mode::dsekp);
  dsekp_.name = "dsekp";
  dsekp_.mode = Mode::dsekp;
  try {
    std::unique_ptr<CsvJournal> journal;
    if (db != nullptr) {
      std::string error;
      ends_ = CsvCommittedEnds::open(db, error);
      if (ends_ == nullptr) throw std::runtime_error(error);
      journal = CsvJournal::open_existing(db, error);
      if (!error.empty()) throw std::runtime_error(error);
    }
    start(psk_, journal.get());
    start(dsekp_, journal.get());
    if (std::string error; journal != nullptr && !journal->drop(error))
      throw std::runtime_error(error);
  } catch (...) {
    for (File* f : {&psk_, &dsekp_})
      if (f->fd >= 0) ::close(f->fd);
    throw;
  }
}

ServerCsvSink::~ServerCsvSink() {
  clear_staged();
  for (File* f : {&psk_, &dsekp_})
    if (f->fd >= 0) ::close(f->fd);
}

void ServerCsvSink::start(File& file, CsvJournal* journal) {
  file.committed = open_log(file.path, file.mode, file.fd);
  std::string error;
  if (journal != nullptr) {
    std::vector<JournalLine> lines;
    if (!journal->lines(file.name, lines))
      throw std::runtime_error("reading the CSV journal of an earlier version");
    CsvRepairReport report;
    if (!repair_csv_file(file.fd, lines, report, error))
      throw std::runtime_error("repairing " + file.path + ": " + error);
    file.committed.end = report.size;
    repaired_rows_ += report.lines_appended;
    if (report.lines_appended > 0)
      logging::logger().warn("CSV repaired: {}: {} rows of an earlier version's journal appended",
                             file.path, report.lines_appended);
  }
  if (ends_ != nullptr) {
    CsvFileEnd recorded;
    if (ends_->find(file.name, recorded, error) && recorded.same_file(file.committed)) {
      const std::uint64_t size = file.committed.end;
      if (size > recorded.end) {
        const std::uint64_t lines = lines_between(file.fd, recorded.end, size);
        if (::ftruncate(file.fd, static_cast<off_t>(recorded.end)) != 0)
          throw std::runtime_error("cannot cut " + file.path +
                                   " to its committed end: " + std::strerror(errno));
        cut_rows_ += lines;
        logging::logger().warn(
            "CSV: {}: {} lines of a unit that did not commit cut ({} to {} bytes); the broker "
            "delivers their frames again",
            file.path, lines, size, recorded.end);
      } else if (size < recorded.end) {
        const std::uint64_t whole = last_whole_line_end(
            file.fd, size, logs::header_line(logs::LogKind::server, file.mode).size());
        if (whole < size && ::ftruncate(file.fd, static_cast<off_t>(whole)) != 0)
          throw std::runtime_error("cannot cut " + file.path +
                                   " to its last whole line: " + std::strerror(errno));
        logging::logger().error(
            "CSV: {} is {} bytes shorter than its committed lines: lines were lost outside the "
            "edge (power loss, or the file cut); they cannot be restored",
            file.path, recorded.end - whole);
      }
      if (!identify(file.fd, file.committed))
        throw std::runtime_error("cannot stat " + file.path + ": " + std::strerror(errno));
    } else if (!error.empty()) {
      throw std::runtime_error(error);
    }
    // A file under another identity than recorded (new, rotated or replaced since) was never
    // written before its identity was recorded, so it holds no uncommitted line: taken as it is.
    if (!ends_->record(file.name, file.committed, error)) throw std::runtime_error(error);
  }
  file.at = Position{file.committed.end, 0, 0};  // `throughput` counts rows of this process
}

bool ServerCsvSink::write(const AcceptedFrame& row) {
  if (staged_rows() == 0) {  // the unit's first row
    for (File* f : {&psk_, &dsekp_}) {
      std::string error;
      if (f->tail_to_cut && !cut(*f, error)) throw std::runtime_error(error);
      f->unit_start = f->at;
    }
  }
  File& file = row.mode == Mode::psk ? psk_ : dsekp_;
  const std::uint64_t bin = row.recvts_ms / 1000;
  const std::uint64_t count = bin == file.at.bin ? file.at.count + 1 : 1;
  const std::size_t before = file.staged.size();
  reserve_wiping(file.staged, server_csv_row_size_bound(row));
  // A throw leaves part of a line behind: the unit then rolls back, which drops it.
  append_server_csv_row(file.staged, row, count);
  ++file.staged_rows;
  file.at.bin = bin;
  file.at.count = count;
  file.at.end += file.staged.size() - before;
  return true;
}

bool ServerCsvSink::append(File& file, std::string& error) noexcept {
  file.appended = true;  // from here a rollback cuts, whatever part was written
  if (write_all(file.fd, file.staged.data(), file.staged.size())) return true;
  error = "cannot append to " + file.path + ": " + std::strerror(errno);
  return false;
}

bool ServerCsvSink::cut(File& file, std::string& error) noexcept {
  if (::ftruncate(file.fd, static_cast<off_t>(file.committed.end)) == 0) {
    file.tail_to_cut = false;
    return true;
  }
  file.tail_to_cut = true;
  error = "cannot cut " + file.path + " back to its committed lines: " + std::strerror(errno);
  return false;
}

bool ServerCsvSink::before_commit() noexcept {
  if (staged_rows() == 0) return true;
  // A record outside the unit's transaction would commit on its own: refuse (SQLite may have
  // ended the transaction by itself after an error).
  if (ends_ != nullptr && !ends_->in_transaction()) return false;
  std::string error;
  bool ok = true;
  for (File* f : {&psk_, &dsekp_})
    if (ok && f->staged_rows > 0) ok = append(*f, error);
  for (File* f : {&psk_, &dsekp_}) {
    if (!ok || ends_ == nullptr || f->staged_rows == 0) continue;
    CsvFileEnd end = f->committed;
    end.end = f->at.end;
    ok = ends_->record(f->name, end, error);
  }
  if (!ok) {
    try {
      logging::logger().error("CSV: {}; the unit is handed back to the broker", error);
    } catch (...) {
    }
  }
  return ok;  // false: rolled_back() follows and cuts what was appended
}

void ServerCsvSink::clear_staged() noexcept {
  for (File* f : {&psk_, &dsekp_}) {
    wipe(f->staged, 0);
    f->staged_rows = 0;
    f->appended = false;
  }
}

void ServerCsvSink::committed() noexcept {
  for (File* f : {&psk_, &dsekp_})
    if (f->staged_rows > 0) f->committed.end = f->at.end;
  clear_staged();
  between_units();
}

void ServerCsvSink::rolled_back() noexcept {
  for (File* f : {&psk_, &dsekp_}) {
    std::string error;
    if (f->appended && !cut(*f, error)) {
      try {
        logging::logger().error("CSV: {}; tried again before the next line", error);
      } catch (...) {
      }
    }
    if (staged_rows() > 0) f->at = f->unit_start;
  }
  clear_staged();
  between_units();
}

void ServerCsvSink::savepoint() noexcept {
  for (File* f : {&psk_, &dsekp_}) {
    f->savepoint_at = f->at;
    f->staged_at_savepoint = f->staged.size();
    f->rows_at_savepoint = f->staged_rows;
  }
}

void ServerCsvSink::rolled_back_to_savepoint() noexcept {
  // Cut back to the savepoint also when no row was counted since: a write that threw may have
  // left part of a line.
  for (File* f : {&psk_, &dsekp_}) {
    wipe(f->staged, f->staged_at_savepoint);
    f->staged_rows = f->rows_at_savepoint;
    f->at = f->savepoint_at;
  }
}

void ServerCsvSink::between_units() noexcept {
  if (reopen_requested_.exchange(false)) psk_.reopen_pending = dsekp_.reopen_pending = true;
  for (File* f : {&psk_, &dsekp_}) {
    if (!f->reopen_pending) continue;
    std::string error;
    if (reopen_file(*f, error)) {
      f->reopen_pending = false;
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now < next_reopen_warning_) continue;
    next_reopen_warning_ = now + std::chrono::seconds(10);
    try {
      logging::logger().warn(
          "CSV: cannot reopen {}: {}; its lines go on into the file open before, and the reopen "
          "is tried again after every unit",
          f->path, error);
    } catch (...) {
    }
  }
}

bool ServerCsvSink::reopen_file(File& file, std::string& error) noexcept {
  // The record of the new file's identity must commit on its own, before its first line.
  if (ends_ != nullptr && ends_->in_transaction()) {
    error = "a transaction is open";
    return false;
  }
  // The old file's uncommitted tail could not be cut any more once it is closed.
  if (file.tail_to_cut && !cut(file, error)) return false;
  try {
    int fd = -1;
    const CsvFileEnd opened = open_log(file.path, file.mode, fd);
    if (ends_ != nullptr && !ends_->record(file.name, opened, error)) {
      ::close(fd);
      return false;
    }
    ::close(file.fd);
    file.fd = fd;
    file.committed = opened;
    file.at = Position{opened.end, 0, 0};
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

}  // namespace dsekp::edge::sinks
