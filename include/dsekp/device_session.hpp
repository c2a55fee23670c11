// The device side of DSEKP v1: handshake state machine, sequence numbers, sealing and downlink.
//
// Sans-I/O: the caller publishes what this returns and feeds in what it receives, with the time.
// States: idle -> (start_handshake) awaiting ACK -> (valid ACK) established. While a new handshake
// is outstanding, the previous session (if any) keeps sealing until the ACK arrives, then its keys
// are wiped. The library owns seq: it starts at 0, increases by one per sealed frame and never
// wraps; rekey_due() turns true at DeviceConfig::rekey_at_seq so the caller starts a new session
// in time, and seal() fails with session_exhausted after seq 2^32-1.
// Retransmission: the caller resends current_init() bytes-identical whenever retransmit_due();
// the delay doubles from initial to max, with random jitter in [delay/2, delay]. Once
// handshake_expired() the INIT is too old to pass the edge's freshness check: start a new one.
// Key confirmation: after handle_ack() the edge holds the new session as pending until a DATA
// frame under it arrives, and sends downlink only on confirmed sessions, so while
// confirmation_pending() the caller should seal and send a frame promptly (an empty one if it
// has nothing to report).
// The INIT's `t`: Unix seconds from the device clock; with DeviceConfig::clockless, a counter the
// application persists across reboots and passes in (the edge then runs with max_skew 0 and
// requires it to grow). Within one DeviceSession `t` strictly increases whatever the caller
// passes (a second INIT within one clock second takes the next second), because the edge refuses
// a `t` that is not greater than its newest accepted one. Across a reboot the application either
// persists last_init_t() and hands it to restore_last_init_t(), or waits until the clock has
// passed the second of its last INIT (the SDK's client waits one second of uptime).
// REKEY requests (v1.1): an edge that receives a frame under a session it does not hold (it lost
// its state, or a held-back INIT displaced the session) asks the device to rekey; handle_rekey()
// authenticates the request and then makes rekey_due() true, so the caller's usual rekey path
// starts the new handshake. It can only make the device rekey sooner, never weaken a session.
// The ratchet (v1.2, PROTOCOL.md 6.6; DeviceConfig::ratchet set): every authentic ACK replaces
// the long-term secret with the next one (device_ratchet.hpp) before the new session starts.
#pragma once

#include <cstdint>

#include "dsekp/crypto.hpp"
#include "dsekp/device_ratchet.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"
#include "dsekp/key_schedule.hpp"
#include "dsekp/replay_window.hpp"
#include "dsekp/spec.hpp"

namespace dsekp {

/// What a device is provisioned with (a ratcheting device: what its SecretStore holds now).
struct DeviceCredentials {
  DevId dev_id;
  DevSecret dev_secret;
  EdgeSalt edge_salt;
  /// Ratchet steps dev_secret is past the provisioned secret (0 without the ratchet).
  std::uint32_t epoch = 0;
};

struct DeviceConfig {
  std::uint32_t rekey_at_seq = 0xFFFF'0000u;  // rekey_due() from this seq on
  std::uint32_t downlink_window = ReplayWindow::kDefaultSize;
  std::uint32_t retransmit_initial_ms = 1'000;
  std::uint32_t retransmit_max_ms = 60'000;
  /// Age after which an unanswered INIT is abandoned (handshake_expired): well inside the edge's
  /// default +-300 s freshness window, leaving room for clock offset.
  std::uint32_t init_max_age_ms = 120'000;
  /// The device has no clock: `t` is an application-persisted counter (see above).
  bool clockless = false;
  /// First seq of every session (default 0). Any value is safe, as each session has fresh keys;
  /// tests use it to reach the end of the seq space.
  std::uint32_t first_seq = 0;
  /// Least time between two accepted REKEY requests: a request recorded by an attacker for a
  /// session the device later draws again can cost the device at most one handshake this often.
  std::uint32_t rekey_request_interval_ms = 60'000;
  /// A session older than this (from its INIT's first send, on the monotonic clock the caller
  /// passes) is due for a rekey (rekey_due(now_ms)): the bound on how long a device can keep
  /// sending under a session the edge lost when no REKEY request gets through. 0: never.
  std::uint64_t rekey_after_ms = 24ull * 3600 * 1000;
  /// Non-null: the device is in ratchet mode (forward secrecy, PROTOCOL.md 6.6) and steps its
  /// secret with this, which must outlive the DeviceSession. Null: the secret never changes (v1).
  DeviceRatchet* ratchet = nullptr;
};

class DeviceSession {
 public:
  /// Takes its own copy of the credentials (wiped on destruction).
  DeviceSession(CryptoBackend& crypto, const DeviceCredentials& credentials,
                const DeviceConfig& config = {}) noexcept;
  // Not copyable or movable: a moved-from session would keep its counters with wiped keys.
  DeviceSession(const DeviceSession&) = delete;
  DeviceSession& operator=(const DeviceSession&) = delete;

  /// Draws a fresh sessctr (different from the current one) and DevNonce, derives the handshake
  /// keys and the INIT. Replaces any outstanding handshake. `now_unix_s` is the device clock, or
  /// the persisted counter of a clockless device (see above).
  Error start_handshake(std::uint32_t now_unix_s, Rng& rng, InitFrame& out) noexcept;

  /// `t` of the latest INIT this session drew (0 before any), for a device that persists it.
  [[nodiscard]] std::uint32_t last_init_t() const noexcept { return has_last_t_ ? last_t_ : 0; }
  /// The `t` of an INIT sent before a reboot: the next INIT's `t` will be greater.
  void restore_last_init_t(std::uint32_t t) noexcept;

  [[nodiscard]] bool handshake_pending() const noexcept { return pending_; }
  /// The outstanding INIT, to retransmit unchanged. Meaningful only while handshake_pending().
  [[nodiscard]] const InitFrame& current_init() const noexcept { return init_; }
  /// True when the outstanding INIT should be (re)sent at `now_ms`.
  [[nodiscard]] bool retransmit_due(std::uint64_t now_ms) const noexcept;
  /// Records that the INIT was sent at `now_ms` and schedules the next retransmission.
  Error note_init_sent(std::uint64_t now_ms, Rng& rng) noexcept;
  /// True when the outstanding INIT was first sent init_max_age_ms ago or more: retransmitting it
  /// is pointless (the edge would find it stale), call start_handshake() again.
  [[nodiscard]] bool handshake_expired(std::uint64_t now_ms) const noexcept;

  /// Verifies an ACK against the outstanding INIT; on success installs the new session. In
  /// ratchet mode the next secret is stored first: secret_store_failed (nothing changes, the
  /// INIT stays outstanding) if the SecretStore refuses it.
  Error handle_ack(const AckFrame& ack) noexcept;

  /// Ratchet steps the device's secret is past the provisioned one (always 0 without the ratchet).
  [[nodiscard]] std::uint32_t epoch() const noexcept { return credentials_.epoch; }

  [[nodiscard]] bool established() const noexcept { return established_; }
  /// True from a successful handle_ack() until the first frame of the new session is sealed.
  [[nodiscard]] bool confirmation_pending() const noexcept { return confirmation_pending_; }
  /// True when the caller should start a new session: the seq reached rekey_at_seq, or an
  /// authenticated REKEY request asked for one.
  [[nodiscard]] bool rekey_due() const noexcept;
  /// rekey_due(), or the session is older than DeviceConfig::rekey_after_ms at `now_ms` (the
  /// clock of note_init_sent()).
  [[nodiscard]] bool rekey_due(std::uint64_t now_ms) const noexcept;
  [[nodiscard]] std::uint16_t sessctr() const noexcept { return sessctr_; }
  [[nodiscard]] std::uint64_t next_seq() const noexcept { return next_seq_; }
  [[nodiscard]] const DevId& dev_id() const noexcept { return credentials_.dev_id; }

  /// Encrypts `plaintext` as the next DATA frame of the established session.
  Error seal(ByteView plaintext, std::uint64_t sendts_ms, DataFrame& out) noexcept;
  /// As above, the ciphertext written to the first plaintext.size() bytes of `ciphertext` (which
  /// may be `plaintext` itself; buffer_too_small, before a seq is consumed, if it is shorter).
  Error seal(ByteView plaintext, std::uint64_t sendts_ms, MutableByteView ciphertext,
             DataFrameView& out) noexcept;

  /// Checks a REKEY request from the edge (PROTOCOL.md 6.1 step 7), cheapest checks first:
  /// no_session before an ACK; rekey_mismatch if it names another device or session or a
  /// handshake is already outstanding; stale_rekey unless its seq is one of the current
  /// session's last kRekeyRecentFrames sealed seqs; rate_limited within
  /// rekey_request_interval_ms of the previous accepted one; bad_rekey_proof. On ok,
  /// rekey_due() is true until the next start_handshake(). `now_ms`: a monotonic clock.
  Error handle_rekey(const RekeyFrame& request, std::uint64_t now_ms) noexcept;

  /// Authenticates and decrypts a downlink frame of the current session, then records its seq.
  Error open_downlink(const DataFrame& frame, MutableByteView plaintext,
                      std::size_t& plaintext_size) noexcept;
  /// As above; `plaintext` may be the frame's ciphertext itself (decrypted in place).
  Error open_downlink(const DataFrameView& frame, MutableByteView plaintext,
                      std::size_t& plaintext_size) noexcept;

 private:
  template <typename Frame>
  Error open_downlink_frame(const Frame& frame, MutableByteView plaintext,
                            std::size_t& plaintext_size) noexcept;

  /// Whether `request` carries its proof under K_rekey of the current secret, or (ratchet mode:
  /// the edge may not have confirmed the step yet) of the one before.
  Error check_rekey_proof(const RekeyFrame& request) noexcept;

  CryptoBackend& crypto_;
  DeviceCredentials credentials_;
  DeviceConfig config_;

  // Outstanding handshake.
  bool pending_ = false;
  InitFrame init_;
  HandshakeKeys handshake_keys_;
  std::uint64_t next_send_ms_ = 0;
  std::uint64_t first_sent_ms_ = 0;
  bool sent_ = false;  // the outstanding INIT was sent at least once
  std::uint32_t backoff_ms_ = 0;
  bool has_last_t_ = false;
  std::uint32_t last_t_ = 0;  // `t` of the latest INIT of this session object

  // Established session.
  bool established_ = false;
  bool confirmation_pending_ = false;
  std::uint16_t sessctr_ = 0;
  // Next to sessctr_, in what would be padding before next_seq_ (the SDK's storage is sized).
  bool rekey_requested_ = false;  // an authenticated REKEY asked for a new session
  bool has_rekey_request_ms_ = false;
  bool has_session_start_ = false;
  std::uint64_t next_seq_ = 0;          // 2^32 once exhausted
  std::uint64_t rekey_request_ms_ = 0;  // when the last REKEY was accepted
  std::uint64_t session_start_ms_ = 0;  // first send of the established session's INIT
  TrafficKeys traffic_;
  ReplayWindow downlink_window_;
};

}  // namespace dsekp
