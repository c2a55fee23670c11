// The downlink journal: for every session the edge sealed a downlink frame under, the seq after
// the last one it used, kept in a small file of its own and made durable (fsync) before the
// frame may be published.
//
// Why outside the session store: the next downlink seq (and so the AES-GCM nonce) lives in the
// device's state, and a state can go back in time: power loss drops SQLite commits that were not
// synced (synchronous=NORMAL), Redis restarted with AOF everysec loses its last second, and an
// operator may restore a state database or Redis from an older copy. The next downlink would
// then reuse a (key, nonce) pair already sent, which leaks GCM's authentication key (anyone on
// the broker path can then forge downlinks) and gets the genuine command refused as a replay.
// The journal is not rolled back with the store, so the edge seals at max(state, journal):
// no seq is used twice, and the device accepts the next command (its window takes any higher
// seq). This is RFC 8613 Appendix B.1.1's idea (persist the sequence number before use), kept
// per session and written once per downlink (downlinks are rare: a fsync each is cheap).
//
// Sessions are named by a tag of their downlink key (session_tag.hpp), never by sessctr: a new
// session with the same sessctr has other keys and starts at 0.
//
// File: text lines "DEV_ID TAG NEXT_SEQ\n", appended; the largest NEXT_SEQ of a (DEV_ID, TAG)
// wins. A torn last line (power loss in the middle of an append that was never acknowledged,
// so whose frame was never published) is ignored; any other malformed line refuses the file.
// It is rewritten (temporary file, fsync, rename, fsync of the directory) when it holds many
// superseded lines. At most kSessionsPerDevice sessions are kept per device, the most recently
// written; a device that lost one is marked, and then no session of it that the journal does
// not know may seal a downlink (it could be one the journal forgot): the device must rekey.
//
// What it does not cover: a journal restored from an older copy together with the store (keep
// it out of such backups, or restore neither), and several edges on one Redis, where each edge
// knows only its own downlinks (docs/PROTOCOL.md 6.5).
//
// Not thread-safe (the daemon's loop thread uses it, under the service's lock).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dsekp::edge {

/// What the journal knows of one session.
struct JournalFloor {
  std::uint64_t next_seq = 0;  // the lowest seq the session may still use
  bool known = false;          // the journal has an entry for this session
  bool forgotten = false;      // the device lost entries: an unknown session must not seal
};

class DownlinkJournal {
 public:
  static constexpr std::size_t kSessionsPerDevice = 16;

  /// Opens (creating it 0600 if missing) the journal at `path`. Null with `error` if it cannot
  /// be read, is malformed, or cannot be created.
  static std::unique_ptr<DownlinkJournal> open(const std::string& path, std::string& error);
  ~DownlinkJournal();
  DownlinkJournal(const DownlinkJournal&) = delete;
  DownlinkJournal& operator=(const DownlinkJournal&) = delete;

  [[nodiscard]] JournalFloor floor(std::string_view dev_id, std::string_view tag) const;
  /// Records that the session's seqs below `next_seq` are used. Returns only after the line is
  /// on disk (fdatasync); false with `error` otherwise (then nothing may be published).
  [[nodiscard]] bool record(std::string_view dev_id, std::string_view tag, std::uint64_t next_seq,
                            std::string& error);

  [[nodiscard]] std::size_t sessions() const noexcept;
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  struct Device {
    std::vector<std::pair<std::string, std::uint64_t>> sessions;  // tag, next seq; oldest first
    bool forgotten = false;
  };
  DownlinkJournal() = default;
  void apply(const std::string& dev_id, const std::string& tag, std::uint64_t next_seq);
  [[nodiscard]] bool compact(std::string& error);
  [[nodiscard]] bool append(const std::string& line, std::string& error);

  std::string path_;
  int fd_ = -1;
  std::map<std::string, Device, std::less<>> devices_;
  std::size_t lines_ = 0;  // lines in the file now
};

}  // namespace dsekp::edge
