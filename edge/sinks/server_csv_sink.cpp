// ServerCsvSink (see server_csv_sink.hpp).
#include "edge/sinks/server_csv_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "edge/file_writes.hpp"
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

ByteView bytes_of(const std::string& s, std::size_t from = 0) noexcept {
  return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()) + from, s.size() - from);
}

// The tail checksum of the `end` bytes of `fd` (the readings read for it are wiped).
bool tail_of(int fd, std::uint64_t end, std::uint64_t& tail) noexcept {
  std::array<std::uint8_t, kCsvTailBytes> bytes{};
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kCsvTailBytes, end));
  const bool ok =
      ::pread(fd, bytes.data(), n, static_cast<off_t>(end - n)) == static_cast<ssize_t>(n);
  if (ok) tail = csv_tail_checksum(ByteView(bytes.data(), n));
  secure_wipe(MutableByteView(bytes.data(), bytes.size()));
  return ok;
}

bool size_of(int fd, std::uint64_t& size) noexcept {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  size = static_cast<std::uint64_t>(st.st_size);
  return true;
}

// Where `fd`'s content ends, as a record would name it.
CsvFileEnd end_of(int fd, const std::string& path) {
  struct stat st {};
  CsvFileEnd e;
  if (::fstat(fd, &st) != 0) throw std::runtime_error(errno_text("cannot stat " + path));
  e.inode = static_cast<std::uint64_t>(st.st_ino);
  e.end = static_cast<std::uint64_t>(st.st_size);
  if (!tail_of(fd, e.end, e.tail)) throw std::runtime_error(errno_text("cannot read " + path));
  return e;
}

// Opens (creating if needed) the log at `path` for appending; a new file, or one cut inside its
// header (a kill while creating it), gets the header. Throws std::runtime_error naming the file.
int open_log(const std::string& path, Mode mode) {
  // The rows hold decrypted readings: owner only, whatever the umask (0600 on creation; an
  // existing file keeps the mode its operator gave it).
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(errno_text("cannot open " + path + " for appending"));
  const std::string header = logs::header_line(logs::LogKind::server, mode);
  std::uint64_t size = 0;
  bool ok = size_of(fd, size);
  if (ok && size < header.size()) ok = ::ftruncate(fd, 0) == 0 && write_all(fd, header);
  if (!ok) {
    const std::string error = errno_text("cannot write the header of " + path);
    ::close(fd);
    throw std::runtime_error(error);
  }
  return fd;
}

// Lines in [from, to) of `fd`, a last one without its line break counted too.
std::uint64_t lines_between(int fd, std::uint64_t from, std::uint64_t to) {
  std::uint64_t lines = 0;
  std::vector<char> chunk(65536);
  char last = '\n';
  while (from < to) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), to - from));
    const ssize_t n = ::pread(fd, chunk.data(), want, static_cast<off_t>(from));
    if (n <= 0) break;
    lines += static_cast<std::uint64_t>(std::count(chunk.begin(), chunk.begin() + n, '\n'));
    last = chunk[static_cast<std::size_t>(n - 1)];
    from += static_cast<std::uint64_t>(n);
  }
  secure_wipe(MutableByteView(reinterpret_cast<std::uint8_t*>(chunk.data()), chunk.size()));
  return lines + (last != '\n' ? 1 : 0);
}

// Where the last whole line of `fd`'s first `size` bytes ends, but not below `floor`: a file a
// power loss left with part of a line (or zeros) at its end is cut there.
std::uint64_t last_whole_line_end(int fd, std::uint64_t size, std::uint64_t floor) {
  std::array<char, 4096> chunk{};
  std::uint64_t end = size;
  bool found = false;
  while (end > floor && !found) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), end - floor));
    if (::pread(fd, chunk.data(), n, static_cast<off_t>(end - n)) != static_cast<ssize_t>(n)) break;
    std::size_t i = n;
    while (i > 0 && chunk[i - 1] != '\n') --i;
    found = i > 0;
    end -= n - i;
  }
  secure_wipe(MutableByteView(reinterpret_cast<std::uint8_t*>(chunk.data()), chunk.size()));
  return std::max(end, floor);
}

// Whether the file open as `fd` (`size` bytes, inode `inode`) is the one `recorded` was written
// for: the same inode, ending as recorded at the recorded end (when it still reaches it).
bool is_recorded_file(int fd, std::uint64_t inode, std::uint64_t size, const CsvFileEnd& recorded) {
  if (inode != recorded.inode) return false;
  if (size < recorded.end) return true;  // shorter than recorded: nothing left to compare
  std::uint64_t tail = 0;
  return tail_of(fd, recorded.end, tail) && tail == recorded.tail;
}

void log_error(const std::string& what) noexcept {
  try {
    logging::logger().error("CSV: {}", what);
  } catch (...) {
  }
}

}  // namespace

ServerCsvSink::ServerCsvSink(const std::string& logs_dir, sqlite3* db) : logs_dir_(logs_dir) {
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
      marks_ = std::make_unique<CsvUnitMarks>(logs_dir);
      journal = CsvJournal::open_existing(db, error);
      if (!error.empty()) throw std::runtime_error(error);
      // An older version has written since the ends were recorded (a downgrade, then this
      // upgrade): they no longer say where anything ends.
      if (journal != nullptr && !ends_->forget_all(error)) throw std::runtime_error(error);
    }
    start(psk_, journal.get());
    start(dsekp_, journal.get());
    // Whatever the mark named is cut or kept now; a later restore must not cut by it.
    if (std::string error; marks_ != nullptr && !marks_->clear(error))
      throw std::runtime_error(error);
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
  file.fd = open_log(file.path, file.mode);
  std::string error;
  if (journal != nullptr) {
    std::vector<JournalLine> lines;
    const bool read = journal->lines(file.name, lines);
    CsvRepairReport report;
    const bool repaired = read && repair_csv_file(file.fd, lines, report, error);
    for (JournalLine& l : lines) wipe(l.line, 0);
    if (!read) throw std::runtime_error("reading the CSV journal of an earlier version");
    if (!repaired) throw std::runtime_error("repairing " + file.path + ": " + error);
    repaired_rows_ += report.lines_appended;
    if (report.lines_appended > 0)
      logging::logger().warn("CSV repaired: {}: {} rows of an earlier version's journal appended",
                             file.path, report.lines_appended);
  }
  if (ends_ != nullptr) {
    CsvFileEnd recorded;
    if (ends_->find(file.name, recorded, error)) {
      const CsvFileEnd now = end_of(file.fd, file.path);
      if (is_recorded_file(file.fd, now.inode, now.end, recorded)) {
        cut_uncommitted(file, file.fd, file.path, now.end, recorded);
      } else {
        cut_in_renamed_file(file, recorded);
      }
    } else if (!error.empty()) {
      throw std::runtime_error(error);
    }
    // A file that does not match the record (new, rotated or replaced since) was never written
    // before its end was recorded, so it holds no uncommitted line: taken as it is.
    file.committed = end_of(file.fd, file.path);
    if (!ends_->record(file.name, file.committed, error)) throw std::runtime_error(error);
  }
  file.at = Position{};  // `throughput` counts rows of this process
}

// Rotated while a unit was under way: its lines are in the renamed file, if it is still there
// (the package's logrotate keeps the newest one uncompressed).
void ServerCsvSink::cut_in_renamed_file(const File& file, const CsvFileEnd& recorded) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(logs_dir_, ec)) {
    struct stat st {};
    if (entry.path() == file.path || ::stat(entry.path().c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_ino) != recorded.inode)
      continue;
    const int fd = ::open(entry.path().c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    const auto size = static_cast<std::uint64_t>(st.st_size);
    try {
      if (is_recorded_file(fd, recorded.inode, size, recorded))
        cut_uncommitted(file, fd, entry.path().string(), size, recorded);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
}

void ServerCsvSink::cut_uncommitted(const File& file, int fd, const std::string& path,
                                    std::uint64_t size, const CsvFileEnd& recorded) {
  if (size > recorded.end) {
    const std::uint64_t lines = lines_between(fd, recorded.end, size);
    // Only the lines of the unit the mark names, appended from the recorded end: anything else
    // after it was committed by units the database does not know (an older copy of it).
    const CsvUnitMark& unit = marks_->found(file.mode);
    if (unit.inode != recorded.inode || unit.from != recorded.end || size > unit.to) {
      logging::logger().error(
          "CSV: {} has {} lines after its recorded end that no unit under way wrote: the state "
          "database is older than the file (restored from a copy?); nothing cut, so frames "
          "accepted again since that copy may be in the file twice",
          path, lines);
      return;
    }
    if (::ftruncate(fd, static_cast<off_t>(recorded.end)) != 0)
      throw std::runtime_error(errno_text("cannot cut " + path + " to its committed end"));
    cut_rows_ += lines;
    logging::logger().warn(
        "CSV: {}: {} lines of a unit that did not commit cut ({} to {} bytes); the broker "
        "delivers their frames again",
        path, lines, size, recorded.end);
  } else if (size < recorded.end) {
    const std::uint64_t whole =
        last_whole_line_end(fd, size, logs::header_line(logs::LogKind::server, file.mode).size());
    if (whole < size && ::ftruncate(fd, static_cast<off_t>(whole)) != 0)
      throw std::runtime_error(errno_text("cannot cut " + path + " to its last whole line"));
    logging::logger().error(
        "CSV: {} is {} bytes shorter than its committed lines: lines were lost outside the edge "
        "(power loss, or the file cut); they cannot be restored",
        path, recorded.end - whole);
  }
}

bool ServerCsvSink::write(const AcceptedFrame& row) {
  if (staged_rows() == 0) {  // the unit's first row
    for (File* f : {&psk_, &dsekp_}) {
      std::string error;
      if (f->tail_to_cut && !cut(*f, f->cut_to, error)) throw std::runtime_error(error);
      f->unit_start = f->at;
    }
  }
  File& file = row.mode == Mode::psk ? psk_ : dsekp_;
  const std::uint64_t bin = row.recvts_ms / 1000;
  const std::uint64_t count = bin == file.at.bin ? file.at.count + 1 : 1;
  reserve_wiping(file.staged, server_csv_row_size_bound(row));
  // A throw leaves part of a line behind: the unit then rolls back, which drops it.
  append_server_csv_row(file.staged, row, count);
  ++file.staged_rows;
  file.at = Position{bin, count};
  return true;
}

bool ServerCsvSink::find_end(File& file, std::string& error) noexcept {
  // Where this unit's lines will start: what a rollback cuts back to, whatever part gets written.
  const off_t from = ::lseek(file.fd, 0, SEEK_END);
  if (from >= 0) {
    file.appended_from = static_cast<std::uint64_t>(from);
    return true;
  }
  error = errno_text("cannot find the end of " + file.path);
  return false;
}

bool ServerCsvSink::append(File& file, std::string& error) noexcept {
  file.appended = true;  // from here a rollback cuts, whatever part was written
  if (write_all(file.fd, file.staged)) return true;
  error = errno_text("cannot append to " + file.path);
  return false;
}

bool ServerCsvSink::cut(File& file, std::uint64_t to, std::string& error) noexcept {
  std::uint64_t size = 0;
  // Never longer: a file cut shorter from outside (truncated by an operator) is left as it is.
  if (size_of(file.fd, size) && (size <= to || ::ftruncate(file.fd, static_cast<off_t>(to)) == 0)) {
    file.tail_to_cut = false;
    return true;
  }
  file.tail_to_cut = true;
  file.cut_to = to;
  error = errno_text("cannot cut " + file.path + " back to its committed lines");
  return false;
}

bool ServerCsvSink::before_commit() noexcept {
  if (staged_rows() == 0) return true;
  // A record outside the unit's transaction would commit on its own: refuse (SQLite may have
  // ended the transaction by itself after an error).
  if (ends_ != nullptr && !ends_->in_transaction()) {
    set_refusal(refusal_,
                "CSV logs: the store transaction has ended (SQLite rolled it back after "
                "an error); nothing appended");
    return false;
  }
  std::string error;
  bool ok = true;
  CsvUnitMark psk, dsekp;
  for (auto [f, mark] : {std::pair{&psk_, &psk}, std::pair{&dsekp_, &dsekp}}) {
    if (!ok || f->staged_rows == 0) continue;
    ok = find_end(*f, error);
    *mark = {f->committed.inode, f->appended_from, f->appended_from + f->staged.size()};
  }
  // The mark goes first: a kill during or after the append finds it at the restart.
  if (ok && marks_ != nullptr) ok = marks_->mark(psk, dsekp, error);
  for (File* f : {&psk_, &dsekp_})
    if (ok && f->staged_rows > 0) ok = append(*f, error);
  for (File* f : {&psk_, &dsekp_}) {
    if (!ok || f->staged_rows == 0) continue;
    CsvFileEnd& e = f->appending;  // becomes the committed end only if the unit commits
    e = CsvFileEnd{f->committed.inode, f->appended_from + f->staged.size(), 0};
    const std::size_t n = std::min<std::size_t>(kCsvTailBytes, f->staged.size());
    e.tail = csv_tail_checksum(bytes_of(f->staged, f->staged.size() - n));
    if (n < kCsvTailBytes && !tail_of(f->fd, e.end, e.tail)) {
      error = errno_text("cannot read " + f->path);
      ok = false;
      continue;
    }
    if (ends_ != nullptr) ok = ends_->record(f->name, e, error);
  }
  if (!ok) {
    set_refusal(refusal_, error);
    log_error(error + "; the unit is handed back to the broker");
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
  bool appended = false;
  for (File* f : {&psk_, &dsekp_}) {
    if (!f->appended) continue;
    appended = true;
    f->committed = f->appending;
  }
  if (appended) clear_mark();
  clear_staged();
  between_units();
}

void ServerCsvSink::clear_mark() noexcept {
  // Left as it is, the mark would make the committed unit look like one under way to a state
  // database restored from a copy taken just before it (csv_unit_mark.hpp); the next unit's
  // mark replaces it anyway, so a failure here is only logged.
  if (std::string error; marks_ != nullptr && !marks_->clear(error)) log_error(error);
}

void ServerCsvSink::rolled_back() noexcept {
  bool cut_all = true;
  bool appended = false;
  for (File* f : {&psk_, &dsekp_}) {
    std::string error;
    appended = appended || f->appended;
    if (f->appended && !cut(*f, f->appended_from, error)) {
      cut_all = false;
      log_error(error + "; tried again before the next line");
    }
    if (staged_rows() > 0) f->at = f->unit_start;
  }
  if (appended && cut_all) clear_mark();  // a cut still due needs the mark across a restart
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
  // The new file's end must be recorded on its own, before its first line.
  if (ends_ != nullptr && ends_->in_transaction()) {
    error = "a transaction is open";
    return false;
  }
  // The old file's uncommitted tail could not be cut any more once it is closed.
  if (file.tail_to_cut && !cut(file, file.cut_to, error)) return false;
  int fd = -1;
  try {
    fd = open_log(file.path, file.mode);
    const CsvFileEnd opened = end_of(fd, file.path);
    if (ends_ != nullptr && !ends_->record(file.name, opened, error)) {
      ::close(fd);
      return false;
    }
    ::close(file.fd);
    file.fd = fd;
    file.committed = opened;
    file.at = Position{};
    return true;
  } catch (const std::exception& e) {
    if (fd >= 0) ::close(fd);
    error = e.what();
    return false;
  }
}

}  // namespace dsekp::edge::sinks
