// A session's tag: 32 lowercase hex digits, the first 16 bytes of SHA-256 over a purpose label
// and one direction's key and IV base. It names a session by its keys without revealing them
// (a tag cannot be turned back into a key), so records kept outside the session state can say
// which session they belong to: a new session that reuses a sessctr (a rebooted device) has
// another tag.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "dsekp/key_schedule.hpp"

namespace dsekp::edge {

inline constexpr std::size_t kSessionTagChars = 32;

/// The tag, or "" if OpenSSL could not compute it (out of memory): an empty tag matches nothing.
[[nodiscard]] std::string session_tag(std::string_view label, const DirectionKeys& keys);

}  // namespace dsekp::edge
