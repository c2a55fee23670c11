// The versioned binary form of dsekp::EdgeDeviceState that the session store persists and the
// working set keeps in memory.
//
// Why an explicit format rather than the struct's bytes: the struct is 3.4 KB of mostly empty
// fixed slots, its layout changes with the compiler and the core, and a row read back from disk
// must be validated, never trusted. Every field is written one by one; only what is in use is
// written (established sessions up to the count, used replay-cache entries, the replay-window
// words the window's size needs), so a device with one session encodes to about 170 bytes.
//
// Layout, version 1. Integers are big-endian; `[n]` is n raw bytes.
//
//   u8   version = 1
//   u8   dev_id length L (0..64; 0 only for a state no INIT has bound yet)
//   [L]  dev_id ([A-Za-z0-9._-])
//   u8   flags: bit 0 has_pending, bit 1 has_newest_init, bit 2 INIT token bucket initialised,
//        bit 3 compact replies, bit 4 ratchet mode (PROTOCOL.md 6.6); the other bits are 0
//   u32  newest_init_t            (0 unless bit 1)
//   u32  next_session_serial
//   u8   established_count        (0..8)
//   u32  token bucket: tokens     (0 unless bit 2)
//   u64  token bucket: last refill, ms  (0 unless bit 2)
//   u8   INIT replay cache: next FIFO slot (0..31)
//   u32  INIT replay cache: used mask (bit i = slot i in use)
//   for each used slot, in increasing slot order:
//        [12] dev_nonce, u64 expires_s
//   if has_pending:
//        u16 INIT sessctr, u32 INIT t, [12] INIT dev_nonce, [16] INIT proof,
//        [12] edge_nonce, [16] ACK proof, session (below; its sessctr equals the INIT's)
//        (the pending INIT's dev_id is the state's dev_id and is not repeated)
//   established_count x session
//   if ratchet mode (bit 4):
//        u32 epoch, [32] the device's current secret, u32 the pending session's ratchet epoch
//        (0 without one; equal to epoch with one). The state must be bound to a device (L > 0).
//
//   session:
//        u16  sessctr
//        [16] K_up, [12] IV_up, [16] K_down, [12] IV_down
//        u16  replay window size W (1..1024)
//        u64  replay window top (highest accepted seq + 1, <= 2^32)
//        ceil(W / 64) x u64 replay window bitmap words, word 0 first (bit i = seq top-1-i);
//             all zero when top = 0, bit 0 set otherwise, no bit for a seq below 0
//        u64  downlink_seq (<= 2^32)
//        u64  created_ms, u64 last_seen_ms
//        u32  serial
//
// The decoder checks every one of these constraints, the exact length and, if asked, that the
// state belongs to the expected device; it never trusts a count or an index. Unused replay-cache
// slots and session slots beyond the count are not stored: the core resets them to empty and
// never reads them. The encoding holds session keys: wipe buffers that held it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dsekp/bytes.hpp"
#include "dsekp/edge_session.hpp"

namespace dsekp::edge {

inline constexpr std::uint8_t kDeviceStateFormatVersion = 1;

/// Why a state could not be encoded or decoded. Names (state_codec_error_name) are stable.
enum class [[nodiscard]] StateCodecError : std::uint8_t{
    ok = 0,
    truncated,            // the input ends inside a field
    trailing_bytes,       // bytes after the last field
    unsupported_version,  // first byte is not a version this build reads
    bad_dev_id,           // dev_id length > 64 or a byte outside the alphabet
    dev_id_mismatch,      // the state belongs to another device than the one asked for
    bad_flags,            // unknown flag bits, or fields set that their flag says are absent
    too_many_sessions,    // established_count > kMaxEstablishedSessions
    bad_replay_cache,     // FIFO slot out of range
    bad_replay_window,    // window size outside 1..1024, top > 2^32, bits that cannot be set
    bad_seq,              // downlink seq beyond 2^32
    inconsistent_state,   // fields that contradict each other (e.g. sessions but no dev_id)
};

/// Stable snake_case name, e.g. "truncated". Never null.
[[nodiscard]] const char* state_codec_error_name(StateCodecError e) noexcept;

/// Encodes `state` into `out` (replacing its contents). Fails with a named error, leaving `out`
/// empty, if the state breaks an invariant of the format (such a state did not come from the
/// core and would not load back).
StateCodecError encode_device_state(const EdgeDeviceState& state, std::vector<std::uint8_t>& out);

/// What encode_device_state would refuse `state` for, without encoding it: a store that writes
/// a state later (at its commit) refuses it at the save all the same.
[[nodiscard]] StateCodecError check_device_state(const EdgeDeviceState& state) noexcept;

/// Decodes and validates `bytes` into `out`. With `expected_dev_id`, a state bound to another
/// device is refused (dev_id_mismatch). On any error `out` is left unchanged.
StateCodecError decode_device_state(ByteView bytes, const DevId* expected_dev_id,
                                    EdgeDeviceState& out) noexcept;

}  // namespace dsekp::edge
