// DownlinkJournal (see downlink_journal.hpp).
#include "edge/store/downlink_journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dsekp/spec.hpp"
#include "edge/store/session_tag.hpp"

namespace dsekp::edge {
namespace {

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool valid_tag(std::string_view tag) {
  return tag.size() == kSessionTagChars && std::all_of(tag.begin(), tag.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// One line "DEV_ID TAG NEXT" (without its newline); false if it is not one.
bool parse_line(std::string_view line, std::string& dev_id, std::string& tag, std::uint64_t& next) {
  const auto a = line.find(' ');
  const auto b = a == std::string_view::npos ? a : line.find(' ', a + 1);
  if (b == std::string_view::npos) return false;
  dev_id.assign(line.substr(0, a));
  tag.assign(line.substr(a + 1, b - a - 1));
  const std::string_view number = line.substr(b + 1);
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), next);
  return is_valid_dev_id(dev_id) && valid_tag(tag) && ec == std::errc() &&
         end == number.data() + number.size() && !number.empty() && next <= (1ull << 32);
}

// The tag of a line that marks a device as having lost entries: no session's tag (SHA-256
// output of all zeros).
const std::string& forgotten_mark() {
  static const std::string mark(kSessionTagChars, '0');
  return mark;
}

std::string line_of(std::string_view dev_id, std::string_view tag, std::uint64_t next) {
  return std::string(dev_id) + " " + std::string(tag) + " " + std::to_string(next) + "\n";
}

}  // namespace

std::unique_ptr<DownlinkJournal> DownlinkJournal::open(const std::string& path,
                                                       std::string& error) {
  std::unique_ptr<DownlinkJournal> j(new DownlinkJournal());
  j->path_ = path;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      const std::string all = text.str();
      std::size_t at = 0;
      std::string dev_id, tag;
      while (at < all.size()) {
        const auto end = all.find('\n', at);
        if (end == std::string::npos) break;  // a torn last append: never acknowledged
        std::uint64_t next = 0;
        if (!parse_line(std::string_view(all).substr(at, end - at), dev_id, tag, next)) {
          error = path + ": line " + std::to_string(j->lines_ + 1) +
                  " is not \"DEV_ID TAG NEXT_SEQ\" (refusing a damaged downlink journal)";
          return nullptr;
        }
        j->apply(dev_id, tag, next);
        ++j->lines_;
        at = end + 1;
      }
    }
  }
  // Rewritten at once: drops a torn tail and superseded lines, and proves the file writable.
  if (!j->compact(error)) return nullptr;
  return j;
}

DownlinkJournal::~DownlinkJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void DownlinkJournal::apply(const std::string& dev_id, const std::string& tag,
                            std::uint64_t next_seq) {
  Device& d = devices_[dev_id];
  if (tag == forgotten_mark()) {
    d.forgotten = true;
    return;
  }
  const auto it = std::find_if(d.sessions.begin(), d.sessions.end(),
                               [&](const auto& s) { return s.first == tag; });
  std::uint64_t next = next_seq;
  if (it != d.sessions.end()) {
    next = std::max(next, it->second);
    d.sessions.erase(it);
  }
  d.sessions.emplace_back(tag, next);  // the most recently written last
  if (d.sessions.size() > kSessionsPerDevice) {
    d.sessions.erase(d.sessions.begin());
    d.forgotten = true;
  }
}

JournalFloor DownlinkJournal::floor(std::string_view dev_id, std::string_view tag) const {
  JournalFloor f;
  const auto d = devices_.find(dev_id);
  if (d == devices_.end()) return f;
  f.forgotten = d->second.forgotten;
  for (const auto& [t, next] : d->second.sessions) {
    if (t != tag) continue;
    f.known = true;
    f.next_seq = next;
  }
  return f;
}

std::size_t DownlinkJournal::sessions() const noexcept {
  std::size_t n = 0;
  for (const auto& [id, d] : devices_) n += d.sessions.size();
  return n;
}

bool DownlinkJournal::record(std::string_view dev_id, std::string_view tag, std::uint64_t next_seq,
                             std::string& error) {
  if (!is_valid_dev_id(dev_id) || !valid_tag(tag) || next_seq > (1ull << 32)) {
    error = "downlink journal: invalid entry";
    return false;
  }
  if (!append(line_of(dev_id, tag, next_seq), error)) return false;
  apply(std::string(dev_id), std::string(tag), next_seq);
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
    for (const auto& [tag, next] : d.sessions) {
      text += line_of(dev_id, tag, next);
      ++lines;
    }
    // A device that lost entries keeps its mark across the rewrite: one line of a tag that no
    // session can have (all zeros), placed first so that it is the oldest.
    if (d.forgotten) {
      text.insert(0, line_of(dev_id, forgotten_mark(), 0));
      ++lines;
    }
  }
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
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
  const std::string dir = std::filesystem::absolute(path_).parent_path().string();
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) {
    error = errno_text("downlink journal " + path_ + ": open");
    return false;
  }
  lines_ = lines;
  return true;
}

}  // namespace dsekp::edge
