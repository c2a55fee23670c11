// The Redis Cluster hash slot of a key: CRC16 (XMODEM: polynomial 0x1021, initial value 0) of the
// key, or of its hash tag, modulo 16,384, as the Redis Cluster specification defines it. The
// hash tag is the part between the first '{' and the next '}' when that part is not empty; the
// store's keys put the dev_id (or the edge id) there, so all of one device's keys share a slot.
#pragma once

#include <cstdint>
#include <string_view>

namespace dsekp::edge::redis {

inline constexpr std::uint16_t kClusterSlots = 16384;

/// The part of `key` that is hashed: its hash tag if it has a non-empty one, else all of it.
[[nodiscard]] std::string_view hashed_part(std::string_view key) noexcept;

/// The hash slot of `key` (0 .. 16,383).
[[nodiscard]] std::uint16_t key_slot(std::string_view key) noexcept;

/// A short hash tag whose slot is `slot` (the smallest decimal number that hashes there): a key
/// `...{<slot_tag(s)>}...` lands in slot s, next to the devices of that slot.
[[nodiscard]] std::string_view slot_tag(std::uint16_t slot);

}  // namespace dsekp::edge::redis
