// How the Redis store keeps an established session's uplink replay window apart from the
// device's state blob, so that a DATA frame is accepted by one small atomic operation on the
// window (commit_script.lua, kind "wacc") instead of a compare-and-set of the whole state,
// and edges that cache the session's keys never need to read the blob for it
// (edge/store/uplink_session_cache.hpp).
//
// Field `w:<sessctr>` of the device's hash, 170 bytes:
//   [0, 32)    the session tag: 32 hex digits, the first 16 bytes of SHA-256 over a label and
//              the session's uplink key and IV base. It names the session, not its sessctr: a
//              new session that reuses a sessctr (a rebooted device) has another tag, so an
//              operation meant for the old one cannot move the new one's window. It reveals
//              nothing the hash does not hold already (the blob holds the keys themselves).
//   [32, 42)   top: the highest accepted seq + 1 (0: none yet), 10 decimal digits.
//   [42, 170)  a ring of 1024 bits: bit (s mod 1024), least significant bit of a byte first,
//              is set iff seq s in [top - 1024, top) was accepted.
// ReplayWindow keeps the last W <= 1024 seqs below top as a bitmap shifted on every new top; the
// ring holds the same facts without shifting (Lua has no 64-bit shifts). Only the W positions
// below top decide anything, in both forms, so conversions either way preserve every verdict.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dsekp/edge_session.hpp"
#include "edge/store/session_tag.hpp"

namespace dsekp::edge::redis {

inline constexpr std::size_t kWindowTopChars = 10;
inline constexpr std::size_t kWindowRingBytes = ReplayWindow::kMaxSize / 8;
inline constexpr std::size_t kWindowFieldSize =
    kSessionTagChars + kWindowTopChars + kWindowRingBytes;

/// "w:<sessctr>".
[[nodiscard]] std::string window_field_name(std::uint16_t sessctr);

/// The session's tag (32 lowercase hex digits).
[[nodiscard]] std::string session_tag(const EdgeSession& session);

/// The field value for `window` under `tag`.
[[nodiscard]] std::string encode_window_field(std::string_view tag, const ReplayWindow& window);

enum class WindowFieldMatch : std::uint8_t {
  same_session,   // the tag matches: `window` now holds the stored window
  other_session,  // a well-formed field of another session with this sessctr
  malformed,      // wrong size, or a top that is not 10 digits or exceeds 2^32
};

/// Reads `value` into `window` (keeping the window's size) if its tag is `tag`.
[[nodiscard]] WindowFieldMatch decode_window_field(std::string_view value, std::string_view tag,
                                                   ReplayWindow& window);

/// The seqs `after` holds as accepted and `before` does not, ascending: what a save adds to a
/// session's window since it was loaded.
[[nodiscard]] std::vector<std::uint32_t> newly_accepted(const ReplayWindow& before,
                                                        const ReplayWindow& after);

}  // namespace dsekp::edge::redis
