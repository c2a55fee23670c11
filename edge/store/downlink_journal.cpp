// DownlinkJournal (see downlink_journal.hpp).
#include "edge/store/downlink_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "dsekp/spec.hpp"
#include "edge/file_writes.hpp"
#include "edge/store/session_tag.hpp"

namespace dsekp::edge {
namespace {

bool valid_tag(std::string_view tag) {
  return tag.size() == kSessionTagChars && std::all_of(tag.begin(), tag.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The tag of a line that carries a device's watermark instead of a session: no session's tag
// (a SHA-256 output of all zeros).
const std::string& forgotten_mark() {
  static const std::string mark(kSessionTagChars, '0');
  return mark;
}

bool parse_number(std::string_view text, std::uint64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// One line "DEV_ID TAG NEXT_SEQ CREATED_MS" (without its newline); false if it is not one.
bool parse_line(std::string_view line, std::string& dev_id, std::string& tag, std::uint64_t& next,
                std::uint64_t& created_ms) {
  const auto a = line.find(' ');
  const auto b = a == std::string_view::npos ? a : line.find(' ', a + 1);
  const auto c = b == std::string_view::npos ? b : line.find(' ', b + 1);
  if (c == std::string_view::npos) return false;
  dev_id.assign(line.substr(0, a));
  tag.assign(line.substr(a + 1, b - a - 1));
  return is_valid_dev_id(dev_id) && valid_tag(tag) &&
         parse_number(line.substr(b + 1, c - b - 1), next) && next <= (1ull << 32) &&
         parse_number(line.substr(c + 1), created_ms);
}

std::string line_of(std::string_view dev_id, std::string_view tag, std::uint64_t next,
                    std::uint64_t created_ms) {
  return std::string(dev_id) + " " + std::string(tag) + " " + std::to_string(next) + " " +
         std::to_string(created_ms) + "\n";
}

// The whole file, or false with `error`. Only a missing file reads as empty: one that cannot be
// read must not be taken for a journal without entries.
bool read_whole_file(const std::string& path, std::string& out, std::string& error) {
  out.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return true;
    error = errno_text("downlink journal " + path + ": open");
    return false;
  }
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno_text("downlink journal " + path + ": read");
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return true;
}

}  // namespace

std::unique_ptr<DownlinkJournal> DownlinkJournal::open(const std::string& path,
                                                       std::string& error) {
  std::unique_ptr<DownlinkJournal> j(new DownlinkJournal());
  j->path_ = path;
  // The journal file itself is replaced by every rewrite, so the lock lives on a file of its own,
  // named after the journal's canonical path: a symlink to the same journal meets the same lock.
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  const std::string lock_path = (ec ? std::filesystem::path(path) : canonical).string() + ".lock";
  j->lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (j->lock_fd_ < 0) {
    error = errno_text("downlink journal " + lock_path + ": open");
    return nullptr;
  }
  if (::flock(j->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    error = errno == EWOULDBLOCK
                ? "downlink journal " + path +
                      " is in use by another process (another edge on the same journal?)"
                : errno_text("downlink journal " + lock_path + ": flock");
    return nullptr;
  }
  std::string all;
  if (!read_whole_file(path, all, error)) return nullptr;
  std::size_t at = 0;
  std::string dev_id, tag;
  while (at < all.size()) {
    const auto end = all.find('\n', at);
    if (end == std::string::npos) break;  // a torn last append: never acknowledged
    std::uint64_t next = 0;
    std::uint64_t created_ms = 0;
    if (!parse_line(std::string_view(all).substr(at, end - at), dev_id, tag, next, created_ms)) {
      error = path + ": line " + std::to_string(j->lines_ + 1) +
              " is not \"DEV_ID TAG NEXT_SEQ CREATED_MS\" (refusing a damaged downlink journal)";
      return nullptr;
    }
    j->apply(dev_id, tag, next, created_ms);
    ++j->lines_;
    at = end + 1;
  }
  // Rewritten at once: drops a torn tail and superseded lines, and proves the file writable.
  if (!j->compact(error)) return nullptr;
  return j;
}

DownlinkJournal::~DownlinkJournal() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

void DownlinkJournal::apply(const std::string& dev_id, const std::string& tag,
                            std::uint64_t next_seq, std::uint64_t created_ms) {
  Device& d = devices_[dev_id];
  if (tag == forgotten_mark()) {
    d.forgotten = true;
    d.forgotten_up_to_ms = std::max(d.forgotten_up_to_ms, created_ms);
    return;
  }
  const auto it = std::find_if(d.sessions.begin(), d.sessions.end(),
                               [&](const Session& s) { return s.tag == tag; });
  Session entry{tag, next_seq, created_ms};
  if (it != d.sessions.end()) {
    entry.next_seq = std::max(next_seq, it->next_seq);
    d.sessions.erase(it);
  }
  d.sessions.push_back(std::move(entry));  // the most recently written last
  if (d.sessions.size() > kSessionsPerDevice) {
    d.forgotten = true;
    d.forgotten_up_to_ms = std::max(d.forgotten_up_to_ms, d.sessions.front().created_ms);
    d.sessions.erase(d.sessions.begin());
  }
}

JournalFloor DownlinkJournal::floor(std::string_view dev_id, std::string_view tag,
                                    std::uint64_t created_ms) const {
  JournalFloor f;
  const auto d = devices_.find(dev_id);
  if (d == devices_.end()) return f;
  for (const Session& s : d->second.sessions) {
    if (s.tag != tag) continue;
    f.known = true;
    f.next_seq = s.next_seq;
  }
  f.forgotten = !f.known && d->second.forgotten && created_ms <= d->second.forgotten_up_to_ms;
  return f;
}

std::size_t DownlinkJournal::sessions() const noexcept {
  std::size_t n = 0;
  for (const auto& [id, d] : devices_) n += d.sessions.size();
  return n;
}

bool DownlinkJournal::record(std::string_view dev_id, std::string_view tag, std::uint64_t next_seq,
                             std::uint64_t created_ms, std::string& error) {
  if (!is_valid_dev_id(dev_id) || !valid_tag(tag) || tag == forgotten_mark() ||
      next_seq > (1ull << 32)) {
    error = "downlink journal: invalid entry";
    return false;
  }
  // A failed append may have left part of a line: rewrite the file from memory first.
  if (dirty_ && !compact(error)) return false;
  if (!append(line_of(dev_id, tag, next_seq, created_ms), error)) {
    dirty_ = true;
    return false;
  }
  apply(std::string(dev_id), std::string(tag), next_seq, created_ms);
  ++lines_;
  // Superseded lines: rewrite once they outnumber the live entries well.
  if (lines_ > 4 * sessions() + 1024 && !compact(error)) return false;
  return true;
}

bool DownlinkJournal::append(const std::string& line, std::string& error) {
  if (!write_all(fd_, line)) {
    error = errno_text("downlink journal " + path_ + ": write");
    return false;
  }
  if (::fdatasync(fd_) != 0) {
    error = errno_text("downlink journal " + path_ + ": fdatasync");
    return false;
  }
  return true;
}

bool DownlinkJournal::compact(std::string& error) {
  std::string text;
  std::size_t lines = 0;
  for (const auto& [dev_id, d] : devices_) {
    // A device that lost entries keeps its watermark across the rewrite.
    if (d.forgotten) {
      text += line_of(dev_id, forgotten_mark(), 0, d.forgotten_up_to_ms);
      ++lines;
    }
    for (const Session& session : d.sessions) {
      text += line_of(dev_id, session.tag, session.next_seq, session.created_ms);
      ++lines;
    }
  }
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    error = errno_text("downlink journal " + tmp + ": open");
    return false;
  }
  const bool written = write_all(fd, text) && ::fsync(fd) == 0;
  ::close(fd);
  if (!written || std::rename(tmp.c_str(), path_.c_str()) != 0) {
    error = errno_text("downlink journal " + path_ + ": rewrite");
    std::remove(tmp.c_str());
    return false;
  }
  // The rename must be durable before anything is appended to the new file: a power loss would
  // otherwise bring back the old file without those appends.
  const std::string dir = std::filesystem::absolute(path_).parent_path().string();
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const bool dir_synced = dfd >= 0 && ::fsync(dfd) == 0;
  if (dfd >= 0) ::close(dfd);
  if (!dir_synced) {
    error = errno_text("downlink journal " + dir + ": fsync of the directory");
    return false;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) {
    error = errno_text("downlink journal " + path_ + ": open");
    return false;
  }
  lines_ = lines;
  dirty_ = false;
  return true;
}

}  // namespace dsekp::edge
