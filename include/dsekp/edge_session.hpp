// The edge side of DSEKP v1: INIT verification, ACKs, sessions per device, data and downlink.
//
// Sans-I/O and storage-agnostic: the caller looks up the device's secret and its EdgeDeviceState
// (from memory, SQLite or Redis), calls one of these, and persists the state.
// Persist BEFORE publishing what a call returned (the ACK, a downlink frame) and hold one writer
// per device: a downlink frame published from a state that is then lost would have its seq, and
// so its nonce, used again after a restart.
//
// INIT handling, in order (each failure is a named Error, and nothing is sent back):
//   1. not this protocol version / malformed: rejected by the codec before this point;
//   2. stale_timestamp: |t - now| > max_skew (skipped when max_skew_s == 0);
//   3. dev_id_mismatch: the state belongs to another device;
//   4. bad_proof: the proof does not verify under the keys derived from DEV_SECRET;
//   5. the same INIT as the pending one (a retransmission): the same ACK again, nothing changes;
//   6. superseded_init: `t` is older than the newest INIT accepted from this device (with
//      max_skew_s == 0, `t` is the device's counter and must be strictly greater);
//   7. duplicate_init: (dev_id, dev_nonce) seen before (a replay within the same `t`);
//   8. rate_limited: the replay cache is full of unexpired entries (fail closed rather than
//      forget a nonce), the admission hook says no, or the per-device token bucket is empty;
//   9. the session becomes the device's single *pending* session (replacing an older pending one)
//      with a fresh EdgeNonce, and an ACK is returned.
// Replays and withheld old INITs never reach step 8, so they cannot use up a device's budget.
// Key confirmation: the pending session becomes *established* when a DATA frame under it
// authenticates. At most max_established sessions are kept; the oldest (by the order the edge
// accepted their INITs, not by wall clock) is evicted first, and an established session with the
// same sessctr is replaced. A pending session never evicts one. Downlink uses the newest
// established session.
// The ratchet (v1.2, PROTOCOL.md 6.6): a device in ratchet mode has its current long-term secret
// and its epoch in its state (EdgeDeviceState::ratchet, set up once by enable_ratchet()), so the
// step is stored in the same write as the sessions. handle_init() then verifies the proof under
// that secret and, failing that, under the next ratchet_lookahead ones (the device steps at the
// ACK, the edge only when it learns that the device did: the confirming DATA frame, or an INIT
// under a later secret); open_data() steps the secret when it confirms a session whose INIT the
// current secret verified.
// States loaded from storage are bounds-checked on entry (counts and indexes are clamped), so a
// corrupted row cannot cause an out-of-bounds access.
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

/// Upper bound of EdgeConfig::ratchet_lookahead.
inline constexpr std::uint32_t kMaxRatchetLookahead = 1024;

struct EdgeConfig {
  EdgeSalt edge_salt;
  std::uint32_t max_skew_s = 300;     // 0 disables the INIT timestamp check (clockless devices)
  std::uint32_t max_established = 5;  // 1..kMaxEstablishedSessions
  std::uint32_t replay_window = ReplayWindow::kDefaultSize;
  TokenBucketConfig init_rate;
  InitAdmissionHook* admission_hook = nullptr;
  /// Ratchet mode: how many secrets past its own the edge tries on an INIT (1..
  /// kMaxRatchetLookahead). 1 covers every loss of a message or reboot; more lets the edge catch
  /// up after its state was restored from an older copy, at up to this many extra derivations
  /// per INIT whose proof is wrong (PROTOCOL.md 6.6).
  std::uint32_t ratchet_lookahead = 16;
};

/// One session's state at the edge (target <= 256 bytes).
struct EdgeSession {
  std::uint16_t sessctr = 0;
  TrafficKeys keys;
  ReplayWindow uplink_window;
  std::uint64_t downlink_seq = 0;  // next seq the edge seals downlink with (2^32 = used up)
  std::uint64_t created_ms = 0;
  std::uint64_t last_seen_ms = 0;
  std::uint32_t serial = 0;  // per-device order of acceptance: larger is newer
};

/// The handshake the edge has answered but that no DATA frame has confirmed yet.
struct PendingSession {
  InitFrame init;  // to recognise retransmissions of the same INIT
  EdgeNonce edge_nonce;
  Proof ack_proof;  // the ACK is re-sent, not re-derived, for a retransmitted INIT
  EdgeSession session;
  std::uint32_t ratchet_epoch = 0;  // ratchet mode: the epoch of the secret its INIT verified under
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

/// A ratcheting device's current long-term secret at the edge (PROTOCOL.md 6.6).
struct RatchetState {
  bool active = false;      // the device is in ratchet mode; the fields below are its secret
  std::uint32_t epoch = 0;  // ratchet steps past the provisioned secret
  DevSecret secret;         // S_epoch; the provisioned secret and every earlier one are gone
};

/// Everything the edge keeps for one device. Movable (a moved-from state is empty: no sessions),
/// not copyable (it holds keys).
struct EdgeDeviceState {
  DevId dev_id;  // bound by the first accepted INIT; every later call must name the same device
  bool has_pending = false;
  PendingSession pending;
  // Slots [0, established_count) are in use; the others hold no keys (default, decoded, copied
  // or moved from). The core only appends a slot as it counts it or overwrites one in place, and
  // the edge's state copy and clear (edge/store/device_state_copy.hpp) rely on it: they skip them.
  std::array<EdgeSession, kMaxEstablishedSessions> established{};
  std::uint32_t established_count = 0;
  bool has_newest_init = false;
  std::uint32_t newest_init_t = 0;        // `t` of the newest accepted INIT
  std::uint32_t next_session_serial = 0;  // serial of the next accepted INIT's session
  InitReplayCache seen_inits;
  TokenBucket init_bucket;
  // The device's newest accepted INIT was in the compact encoding, so its downlink frames go
  // out compact too (PROTOCOL.md section 2). Kept by the edge's service, which sees the bytes;
  // the core never reads it.
  bool compact_replies = false;
  RatchetState ratchet;

  EdgeDeviceState() = default;
  EdgeDeviceState(EdgeDeviceState&& other) noexcept;
  EdgeDeviceState& operator=(EdgeDeviceState&& other) noexcept;
  EdgeDeviceState(const EdgeDeviceState&) = delete;
  EdgeDeviceState& operator=(const EdgeDeviceState&) = delete;
  ~EdgeDeviceState() = default;
};

struct InitOutcome {
  AckFrame ack;
  bool retransmission = false;  // same INIT as the pending one: the ACK was re-sent unchanged
  /// Ratchet mode: steps the edge's secret moved forward to the INIT's (0 normally, 1 after a
  /// lost confirmation, more only after the state went back in time).
  std::uint32_t ratchet_steps = 0;
};

struct DataOutcome {
  std::size_t plaintext_size = 0;
  bool confirmed_session = false;  // this frame moved a pending session to established
  bool evicted = false;            // ...which evicted an older established session
  std::uint16_t evicted_sessctr = 0;
  bool ratcheted = false;  // ratchet mode: the confirmation stepped the device's secret
};

/// Puts the state of device `dev_id` in ratchet mode from its provisioned secret (epoch 0),
/// binding an unbound state to the device. Does nothing if the state is already in ratchet mode
/// (its own secret is newer). false, changing nothing, if the state belongs to another device.
[[nodiscard]] bool enable_ratchet(EdgeDeviceState& state, const DevId& dev_id,
                                  const DevSecret& provisioned) noexcept;

/// The session a downlink goes out under: the newest established one (in acceptance order), or
/// null if none is established.
[[nodiscard]] EdgeSession* downlink_session(EdgeDeviceState& state) noexcept;

class EdgeProtocol {
 public:
  /// `config.max_established` is clamped into [1, kMaxEstablishedSessions].
  EdgeProtocol(CryptoBackend& crypto, const EdgeConfig& config) noexcept;

  /// Verifies `init` from the device whose secret is `dev_secret` (found by init.dev_id) against
  /// that device's `state`. A state in ratchet mode uses its own secret (state.ratchet) and does
  /// not read `dev_secret`.
  Error handle_init(const InitFrame& init, const DevSecret& dev_secret, EdgeDeviceState& state,
                    std::uint64_t now_ms, Rng& rng, InitOutcome& out) noexcept;

  /// Authenticates and decrypts an uplink DATA frame, then applies the replay window and key
  /// confirmation. `plaintext` needs frame.ciphertext.size() bytes.
  Error open_data(const DataFrame& frame, EdgeDeviceState& state, std::uint64_t now_ms,
                  MutableByteView plaintext, DataOutcome& out) noexcept;

  /// open_data() for a frame under one established session held apart from its device state
  /// (the Redis store's local cache of session keys, edge/store/uplink_session_cache.hpp):
  /// authenticates with the session's uplink keys, then applies its replay window. The caller
  /// has checked that `session` is the device's established session with frame.sessctr. An
  /// authentication failure (bad_tag, ...) means only that these keys do not open the frame: the
  /// caller then asks open_data() with the whole state (a pending session may share the sessctr).
  Error open_established(const DataFrame& frame, EdgeSession& session, std::uint64_t now_ms,
                         MutableByteView plaintext, std::size_t& plaintext_size) noexcept;

  /// Seals a downlink frame under the device's newest established session (downlink_session)
  /// with its next downlink seq.
  Error seal_downlink(EdgeDeviceState& state, ByteView plaintext, std::uint64_t sendts_ms,
                      DataFrame& out) noexcept;

  [[nodiscard]] const EdgeConfig& config() const noexcept { return config_; }

 private:
  CryptoBackend& crypto_;
  EdgeConfig config_;
};

}  // namespace dsekp
