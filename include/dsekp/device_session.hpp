// The device side of DSEKP v1: handshake state machine, sequence numbers, sealing and downlink.
//
// Sans-I/O: the caller publishes what this returns and feeds in what it receives, with the time.
// States: idle -> (start_handshake) awaiting ACK -> (valid ACK) established. While a new handshake
// is outstanding, the previous session (if any) keeps sealing until the ACK arrives, then its keys
// are wiped. The library owns seq: it starts at 0, increases by one per sealed frame and never
// wraps; rekey_due() turns true at DeviceConfig::rekey_at_seq so the caller starts a new session
// in time, and seal() fails with session_exhausted after seq 2^32-1.
// Retransmission: the caller resends current_init() bytes-identical whenever retransmit_due();
// the delay doubles from initial to max, with random jitter in [delay/2, delay].
#pragma once

#include <cstdint>

#include "dsekp/crypto.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"
#include "dsekp/key_schedule.hpp"
#include "dsekp/replay_window.hpp"
#include "dsekp/spec.hpp"

namespace dsekp {

/// What a device is provisioned with.
struct DeviceCredentials {
  DevId dev_id;
  DevSecret dev_secret;
  EdgeSalt edge_salt;
};

struct DeviceConfig {
  std::uint32_t rekey_at_seq = 0xFFFF'0000u;  // rekey_due() from this seq on
  std::uint32_t downlink_window = ReplayWindow::kDefaultSize;
  std::uint32_t retransmit_initial_ms = 1'000;
  std::uint32_t retransmit_max_ms = 60'000;
  /// First seq of every session (default 0). Any value is safe, as each session has fresh keys;
  /// tests use it to reach the end of the seq space.
  std::uint32_t first_seq = 0;
};

class DeviceSession {
 public:
  /// Takes its own copy of the credentials (wiped on destruction).
  DeviceSession(CryptoBackend& crypto, const DeviceCredentials& credentials,
                const DeviceConfig& config = {}) noexcept;

  /// Draws a fresh sessctr (different from the current one) and DevNonce, derives the handshake
  /// keys and the INIT. Replaces any outstanding handshake. `now_unix_s` is the device clock (0 for
  /// a device without a clock; the edge must then run with max_skew 0).
  Error start_handshake(std::uint32_t now_unix_s, Rng& rng, InitFrame& out) noexcept;

  [[nodiscard]] bool handshake_pending() const noexcept { return pending_; }
  /// The outstanding INIT, to retransmit unchanged. Meaningful only while handshake_pending().
  [[nodiscard]] const InitFrame& current_init() const noexcept { return init_; }
  /// True when the outstanding INIT should be (re)sent at `now_ms`.
  [[nodiscard]] bool retransmit_due(std::uint64_t now_ms) const noexcept;
  /// Records that the INIT was sent at `now_ms` and schedules the next retransmission.
  Error note_init_sent(std::uint64_t now_ms, Rng& rng) noexcept;

  /// Verifies an ACK against the outstanding INIT; on success installs the new session.
  Error handle_ack(const AckFrame& ack) noexcept;

  [[nodiscard]] bool established() const noexcept { return established_; }
  [[nodiscard]] bool rekey_due() const noexcept;
  [[nodiscard]] std::uint16_t sessctr() const noexcept { return sessctr_; }
  [[nodiscard]] std::uint64_t next_seq() const noexcept { return next_seq_; }
  [[nodiscard]] const DevId& dev_id() const noexcept { return credentials_.dev_id; }

  /// Encrypts `plaintext` as the next DATA frame of the established session.
  Error seal(ByteView plaintext, std::uint64_t sendts_ms, DataFrame& out) noexcept;

  /// Authenticates and decrypts a downlink frame of the current session, then records its seq.
  Error open_downlink(const DataFrame& frame, MutableByteView plaintext,
                      std::size_t& plaintext_size) noexcept;

 private:
  CryptoBackend& crypto_;
  DeviceCredentials credentials_;
  DeviceConfig config_;

  // Outstanding handshake.
  bool pending_ = false;
  InitFrame init_;
  HandshakeKeys handshake_keys_;
  std::uint64_t next_send_ms_ = 0;
  std::uint32_t backoff_ms_ = 0;

  // Established session.
  bool established_ = false;
  std::uint16_t sessctr_ = 0;
  std::uint64_t next_seq_ = 0;  // 2^32 once exhausted
  TrafficKeys traffic_;
  ReplayWindow downlink_window_;
};

}  // namespace dsekp
