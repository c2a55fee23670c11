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
// File: text lines "DEV_ID TAG NEXT_SEQ CREATED_MS\n", appended; the largest NEXT_SEQ of a
// (DEV_ID, TAG) wins. A torn last line (power loss in the middle of an append that was never
// acknowledged, so whose frame was never published) is ignored; any other malformed line, or a
// file that cannot be read, refuses to open (never taken for an empty journal). After a failed
// append the file is rewritten from memory before the next one, so a half-written line cannot
// merge with the next. It is rewritten (temporary file, fsync, rename, fsync of the directory)
// when it holds many superseded lines. At most kSessionsPerDevice sessions are kept per device,
// the most recently written; when one is dropped the device keeps a watermark, the creation
// time of the newest session dropped, and a session the journal does not know that was created
// no later than that may not seal (it could be one the journal forgot; the device must rekey).
// A newer session has keys no dropped entry was about, so it seals from its stored seq.
//
// What it does not cover: a journal restored from an older copy together with the store (keep
// it out of such backups, or restore neither). Several edges on one Redis each know only their
// own downlinks, which is why they seal in disjoint lanes (edge/service/downlink_lane.hpp).
//
// One process at a time: open() takes an exclusive lock (flock on PATH.lock, held until the
// journal is destroyed), so a second edge started on the same journal is refused instead of
// appending to a file whose other writer it does not know (its seqs would then be unknown to
// both).
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
  bool forgotten = false;      // unknown, and maybe one the journal dropped: must not seal
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

  /// What the journal knows of the session `tag` of `dev_id`, created at `created_ms` (the
  /// session's own creation time, EdgeSession::created_ms).
  [[nodiscard]] JournalFloor floor(std::string_view dev_id, std::string_view tag,
                                   std::uint64_t created_ms) const;
  /// Records that the session's seqs below `next_seq` are used. Returns only after the line is
  /// on disk (fdatasync); false with `error` otherwise (then nothing may be published).
  [[nodiscard]] bool record(std::string_view dev_id, std::string_view tag, std::uint64_t next_seq,
                            std::uint64_t created_ms, std::string& error);

  [[nodiscard]] std::size_t sessions() const noexcept;
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  struct Session {
    std::string tag;
    std::uint64_t next_seq = 0;
    std::uint64_t created_ms = 0;
  };
  struct Device {
    std::vector<Session> sessions;         // the most recently written last
    bool forgotten = false;                // a session was dropped...
    std::uint64_t forgotten_up_to_ms = 0;  // ...the newest of them created then
  };
  DownlinkJournal() = default;
  void apply(const std::string& dev_id, const std::string& tag, std::uint64_t next_seq,
             std::uint64_t created_ms);
  [[nodiscard]] bool compact(std::string& error);
  [[nodiscard]] bool append(const std::string& line, std::string& error);

  std::string path_;
  int fd_ = -1;
  int lock_fd_ = -1;  // PATH.lock, flock(LOCK_EX) while this journal lives
  std::map<std::string, Device, std::less<>> devices_;
  std::size_t lines_ = 0;  // lines in the file now
  bool dirty_ = false;     // an append failed: rewrite the file before the next one
};

}  // namespace dsekp::edge
