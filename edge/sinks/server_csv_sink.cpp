// ServerCsvSink (see server_csv_sink.hpp).
#include "edge/sinks/server_csv_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "dsekp/bytes.hpp"
#include "edge/logging/edge_logger.hpp"
#include "logs/log_schema.hpp"

#include "edge/sinks/csv_repair.hpp"
#include "edge/sinks/server_csv_format.hpp"

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

std::uint64_t size_of(std::FILE* fp) {
  struct stat st {};
  return ::fstat(::fileno(fp), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

}  // namespace

void ServerCsvSink::open_file(File& file) {
  // The rows hold decrypted readings: owner only, whatever the umask (0600 on creation; an
  // existing file keeps the mode its operator gave it).
  const int fd = ::open(file.path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  file.fp = fd < 0 ? nullptr : ::fdopen(fd, "a+b");  // + : the repair reads it back
  if (file.fp == nullptr) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot open " + file.path +
                             " for appending: " + std::strerror(error));
  }
  // A new file, or one cut inside its header (a kill while creating it), gets the header.
  const std::string header = logs::header_line(logs::LogKind::server, file.mode);
  if (size_of(file.fp) < header.size()) {
    if (::ftruncate(::fileno(file.fp), 0) != 0 ||
        std::fwrite(header.data(), 1, header.size(), file.fp) != header.size() ||
        std::fflush(file.fp) != 0)
      throw std::runtime_error("cannot write the header of " + file.path);
  }
  file.end = size_of(file.fp);
  file.bin = 0;  // `throughput` counts rows of this file
  file.count = 0;
}

void ServerCsvSink::close_files() noexcept {
  for (File* f : {&psk_, &dsekp_}) {
    if (f->fp != nullptr) std::fclose(f->fp);
    f->fp = nullptr;
  }
}

ServerCsvSink::ServerCsvSink(const std::string& logs_dir, sqlite3* db) : logs_dir_(logs_dir) {
  psk_.path = logs_dir + "/" + logs::standard_file_name(logs::LogKind::server, Mode::psk);
  psk_.name = "psk";
  psk_.mode = Mode::psk;
  dsekp_.path = logs_dir + "/" + logs::standard_file_name(logs::LogKind::server, Mode::dsekp);
  dsekp_.name = "dsekp";
  dsekp_.mode = Mode::dsekp;
  try {
    open_file(psk_);
    open_file(dsekp_);
    if (db != nullptr) {
      std::string error;
      journal_ = CsvJournal::open(db, error);
      if (journal_ == nullptr) throw std::runtime_error(error);
      if (!repair_all(error)) throw std::runtime_error("repairing the server CSV logs: " + error);
      // Everything journaled is in place now: forget it (no transaction is open yet).
      if (appended_through_ > 0 && journal_->forget_through(appended_through_))
        forgotten_through_ = appended_through_;
    }
  } catch (...) {
    close_files();
    throw;
  }
}

ServerCsvSink::~ServerCsvSink() {
  // After a clean stop no line is pending: forgetting them now means a file rotated while the
  // edge is stopped is not repaired with lines that are in its predecessor.
  if (journal_ != nullptr && appended_through_ > forgotten_through_ && !needs_repair_)
    (void)journal_->forget_through(appended_through_);
  clear_staged();
  close_files();
}

bool ServerCsvSink::repair(File& file, std::int64_t after, std::int64_t& last_id,
                           std::string& error) {
  std::vector<JournalLine> lines;
  if (!journal_->lines(file.name, lines)) {
    error = "reading the CSV journal";
    return false;
  }
  // Lines this process appended are in the file already, or in its predecessor after a reopen:
  // only the later ones are checked (at start-up that is all of them).
  std::erase_if(lines, [&](const JournalLine& l) { return l.id <= after; });
  if (std::fflush(file.fp) != 0) {
    error = "flushing " + file.path;
    return false;
  }
  CsvRepairReport report;
  if (!repair_csv_file(::fileno(file.fp), lines, report, error)) {
    error = file.path + ": " + error;
    return false;
  }
  file.end = report.size;
  if (!lines.empty() && lines.back().id > last_id) last_id = lines.back().id;
  repaired_rows_ += report.lines_appended;
  if (report.lines_appended > 0 || report.truncated_from > 0)
    logging::logger().warn(
        "CSV repaired: {}: {} rows re-appended{}{}", file.path, report.lines_appended,
        report.appended_at_end ? " at the end (the file was shorter than recorded)" : "",
        report.truncated_from == 0 ? std::string()
                                   : ", cut from " + std::to_string(report.truncated_from) +
                                         " to " + std::to_string(report.truncated_to) + " bytes");
  return true;
}

bool ServerCsvSink::repair_all(std::string& error) {
  // One threshold for both files: their lines share the journal's id sequence, so raising it
  // after the first file would hide older lines of the second.
  std::int64_t last_id = appended_through_;
  if (!repair(psk_, appended_through_, last_id, error) ||
      !repair(dsekp_, appended_through_, last_id, error))
    return false;
  appended_through_ = last_id;
  return true;
}

bool ServerCsvSink::write(const AcceptedFrame& row) {
  if (staged_rows() == 0) {  // the unit's first row: remember the counters for a rollback
    psk_before_ = psk_;
    dsekp_before_ = dsekp_;
  }
  // Only at a unit's first row: the lines staged before in this unit hold offsets in the files
  // as they are now. A reopen that failed left a file closed: every unit tries again (and rolls
  // back while it fails), none appends to a closed file.
  if (staged_rows() == 0 &&
      (reopen_requested_.exchange(false) || psk_.fp == nullptr || dsekp_.fp == nullptr)) {
    close_files();
    open_file(psk_);  // throws: the unit rolls back, and the next one tries again
    open_file(dsekp_);
    psk_before_ = psk_;
    dsekp_before_ = dsekp_;
    needs_repair_ = journal_ != nullptr;  // lines still journaled go into the new files
  }
  if (journal_ != nullptr && staged_rows() == 0 && needs_repair_) {
    std::string error;
    if (!repair_all(error)) {
      logging::logger().error("CSV repair failed: {}", error);
    } else {
      needs_repair_ = false;
      psk_before_ = psk_;
      dsekp_before_ = dsekp_;
    }
  }
  File& file = row.mode == Mode::psk ? psk_ : dsekp_;
  Staged& staged = staged_of(file);
  const std::uint64_t bin = row.recvts_ms / 1000;
  const std::uint64_t count = bin == file.bin ? file.count + 1 : 1;
  const std::size_t before = staged.lines.size();
  reserve_wiping(staged.lines, server_csv_row_size_bound(row));
  // A throw leaves part of a line behind: the unit then rolls back, which cuts it off.
  append_server_csv_row(staged.lines, row, count);
  if (staged.rows++ == 0) staged.offset = file.end;
  file.bin = bin;
  file.count = count;
  file.end += staged.lines.size() - before;
  return true;
}

bool ServerCsvSink::before_commit() noexcept {
  journal_ids_through_ = 0;
  if (journal_ == nullptr || staged_rows() == 0) return true;
  // A journal record outside the unit's transaction would commit on its own: refuse (SQLite
  // may have ended the transaction by itself after an error).
  if (!journal_->in_transaction()) return false;
  try {
    if (appended_through_ > forgotten_through_ && !journal_->forget_through(appended_through_))
      return false;
    for (const File* file : {&psk_, &dsekp_}) {
      const Staged& staged = staged_of(*file);
      if (staged.rows == 0) continue;
      const std::int64_t id = journal_->add(file->name, staged.offset, staged.lines, staged.rows);
      if (id == 0) return false;
      journal_ids_through_ = std::max(journal_ids_through_, id);
    }
  } catch (...) {
    return false;  // out of memory: the unit rolls back
  }
  return true;
}

void ServerCsvSink::clear_staged() noexcept {
  for (Staged* staged : {&staged_psk_, &staged_dsekp_}) {
    secure_wipe(MutableByteView(reinterpret_cast<std::uint8_t*>(staged->lines.data()),
                                staged->lines.size()));
    staged->lines.clear();
    staged->rows = 0;
  }
}

void ServerCsvSink::rolled_back() noexcept {
  journal_ids_through_ = 0;
  if (staged_rows() > 0) {
    // Keep the (possibly reopened) FILE*s; restore only the counters.
    for (auto [now, before] :
         {std::pair{&psk_, &psk_before_}, std::pair{&dsekp_, &dsekp_before_}}) {
      now->end = before->end;
      now->bin = before->bin;
      now->count = before->count;
    }
  }
  clear_staged();
}

void ServerCsvSink::savepoint() noexcept {
  psk_staged_at_savepoint_ = {staged_psk_.lines.size(), staged_psk_.rows};
  dsekp_staged_at_savepoint_ = {staged_dsekp_.lines.size(), staged_dsekp_.rows};
  psk_at_savepoint_ = psk_;
  dsekp_at_savepoint_ = dsekp_;
}

void ServerCsvSink::rolled_back_to_savepoint() noexcept {
  // The message was the unit's first: what rolled_back() restores (the counters as they were
  // after any reopen or repair at that first row) is right.
  const std::uint32_t rows_at_savepoint =
      psk_staged_at_savepoint_.rows + dsekp_staged_at_savepoint_.rows;
  if (rows_at_savepoint == 0) return rolled_back();
  const bool rows_since = staged_rows() > rows_at_savepoint;
  // Cut back to the savepoint also when no row was counted since: a write that threw may have
  // left part of a line.
  for (auto [staged, mark] : {std::pair{&staged_psk_, &psk_staged_at_savepoint_},
                              std::pair{&staged_dsekp_, &dsekp_staged_at_savepoint_}}) {
    if (staged->lines.size() > mark->size) {
      secure_wipe(
          MutableByteView(reinterpret_cast<std::uint8_t*>(staged->lines.data()) + mark->size,
                          staged->lines.size() - mark->size));
      staged->lines.resize(mark->size);
    }
    staged->rows = mark->rows;
  }
  if (!rows_since) return;
  for (auto [now, at] :
       {std::pair{&psk_, &psk_at_savepoint_}, std::pair{&dsekp_, &dsekp_at_savepoint_}}) {
    now->end = at->end;
    now->bin = at->bin;
    now->count = at->count;
  }
}

void ServerCsvSink::committed() noexcept {
  if (journal_ != nullptr) {
    // The forget in this unit's transaction is now durable.
    if (appended_through_ > forgotten_through_ && staged_rows() > 0)
      forgotten_through_ = appended_through_;
  }
  bool ok = !needs_repair_;  // while a repair is due, new lines wait in the journal for it
  for (File* file : {&psk_, &dsekp_}) {
    const Staged& staged = staged_of(*file);
    if (staged.rows == 0) continue;
    std::size_t written = 0;
    if (ok && file->fp != nullptr)
      written = std::fwrite(staged.lines.data(), 1, staged.lines.size(), file->fp);
    if (written != staged.lines.size()) {
      ok = false;
      // The lines that did not reach the file whole (a reading never holds a line break: one
      // that would is written as base64).
      const auto whole = std::count(
          staged.lines.begin(), staged.lines.begin() + static_cast<std::ptrdiff_t>(written), '\n');
      lost_rows_ += staged.rows - static_cast<std::uint64_t>(whole);
    }
  }
  const std::int64_t last_id = std::exchange(journal_ids_through_, 0);
  // Flushed per unit, so a killed edge loses at most what the journal gives back.
  if (staged_rows() > 0 && (std::fflush(psk_.fp) != 0 || std::fflush(dsekp_.fp) != 0)) ok = false;
  if (ok) {
    if (last_id > appended_through_) appended_through_ = last_id;
  } else if (journal_ != nullptr) {
    needs_repair_ = true;
  }
  clear_staged();
}

}  // namespace dsekp::edge::sinks
