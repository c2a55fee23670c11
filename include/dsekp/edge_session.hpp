// The edge side of DSEKP v1: INIT verification, ACKs, sessions per device, data and downlink.
//
// Sans-I/O and storage-agnostic: the caller looks up the device's secret and its EdgeDeviceState
// (from memory, SQLite or Redis), calls one of these, and persists the state afterwards.
//
// INIT handling, in order (each failure is a named Error, and nothing is sent back):
//   1. not this protocol version / malformed: rejected by the codec before this point;
//   2. stale_timestamp: |t - now| > max_skew (skipped when max_skew_s == 0);
//   3. bad_proof: the proof does not verify under the keys derived from DEV_SECRET;
//   4. the same INIT as the pending one (a retransmission): the same ACK again, nothing changes;
//   5. duplicate_init: (dev_id, dev_nonce) seen before (a replay);
//   6. rate_limited: the per-device token bucket or the admission hook says no, or the replay
//      cache is full of unexpired entries (fail closed rather than forget a nonce);
//   7. the session becomes the device's single *pending* session (replacing an older pending one)
//      with a fresh EdgeNonce, and an ACK is returned.
// Key confirmation: the pending session becomes *established* when a DATA frame under it
// authenticates. At most max_established sessions are kept; the oldest is evicted first, and an
// established session with the same sessctr is replaced. A pending session never evicts one.
#pragma once

#include <array>
#include <cstdint>

#include "dsekp/crypto.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"
#include "dsekp/key_schedule.hpp"
#include "dsekp/replay_window.hpp"
#include "dsekp/spec.hpp"
#include "dsekp/token_bucket.hpp"

namespace dsekp {

inline constexpr std::size_t kMaxEstablishedSessions = 8;
inline constexpr std::size_t kInitReplayCacheSize = 32;

/// Optional policy hook consulted after an INIT has verified (e.g. a global INIT rate limit).
class InitAdmissionHook {
 public:
  [[nodiscard]] virtual bool admit_init(const DevId& dev_id, std::uint64_t now_ms) noexcept = 0;

 protected:
  ~InitAdmissionHook() = default;  // never deleted through this interface (see CryptoBackend)
};

struct EdgeConfig {
  EdgeSalt edge_salt;
  std::uint32_t max_skew_s = 300;     // 0 disables the INIT timestamp check (clockless devices)
  std::uint32_t max_established = 5;  // 1..kMaxEstablishedSessions
  std::uint32_t replay_window = ReplayWindow::kDefaultSize;
  TokenBucketConfig init_rate;
  InitAdmissionHook* admission_hook = nullptr;
};

/// One session's state at the edge (target <= 256 bytes).
struct EdgeSession {
  std::uint16_t sessctr = 0;
  TrafficKeys keys;
  ReplayWindow uplink_window;
  std::uint64_t downlink_seq = 0;  // next seq the edge seals downlink with (2^32 = used up)
  std::uint64_t created_ms = 0;
  std::uint64_t last_seen_ms = 0;
};

/// The handshake the edge has answered but that no DATA frame has confirmed yet.
struct PendingSession {
  InitFrame init;  // to recognise retransmissions of the same INIT
  EdgeNonce edge_nonce;
  Proof ack_proof;  // the ACK is re-sent, not re-derived, for a retransmitted INIT
  EdgeSession session;
};

/// INITs seen recently, to reject replays. An entry lives until its INIT can no longer pass the
/// timestamp check (t + max_skew); with max_skew 0 the oldest entry is overwritten (FIFO).
struct InitReplayCache {
  struct Entry {
    DevNonce dev_nonce;
    std::uint64_t expires_s = 0;
    bool used = false;
  };
  std::array<Entry, kInitReplayCacheSize> entries{};
  std::uint32_t next = 0;  // FIFO position for max_skew 0
};

/// Everything the edge keeps for one device.
struct EdgeDeviceState {
  bool has_pending = false;
  PendingSession pending;
  std::array<EdgeSession, kMaxEstablishedSessions> established{};
  std::uint32_t established_count = 0;
  InitReplayCache seen_inits;
  TokenBucket init_bucket;
};

struct InitOutcome {
  AckFrame ack;
  bool retransmission = false;  // same INIT as the pending one: the ACK was re-sent unchanged
};

struct DataOutcome {
  std::size_t plaintext_size = 0;
  bool confirmed_session = false;  // this frame moved a pending session to established
  bool evicted = false;            // ...which evicted an older established session
  std::uint16_t evicted_sessctr = 0;
};

class EdgeProtocol {
 public:
  /// `config.max_established` is clamped into [1, kMaxEstablishedSessions].
  EdgeProtocol(CryptoBackend& crypto, const EdgeConfig& config) noexcept;

  /// Verifies `init` from the device whose secret is `dev_secret` (found by init.dev_id).
  Error handle_init(const InitFrame& init, const DevSecret& dev_secret, EdgeDeviceState& state,
                    std::uint64_t now_ms, Rng& rng, InitOutcome& out) noexcept;

  /// Authenticates and decrypts an uplink DATA frame, then applies the replay window and key
  /// confirmation. `plaintext` needs frame.ciphertext.size() bytes.
  Error open_data(const DataFrame& frame, EdgeDeviceState& state, std::uint64_t now_ms,
                  MutableByteView plaintext, DataOutcome& out) noexcept;

  /// Seals a downlink frame under the device's newest established session.
  Error seal_downlink(const DevId& dev_id, EdgeDeviceState& state, ByteView plaintext,
                      std::uint64_t sendts_ms, DataFrame& out) noexcept;

  [[nodiscard]] const EdgeConfig& config() const noexcept { return config_; }

 private:
  CryptoBackend& crypto_;
  EdgeConfig config_;
};

}  // namespace dsekp
