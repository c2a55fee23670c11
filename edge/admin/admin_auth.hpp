// The edge's own check of an admin request (`dsekp edge send`): a MAC under the registry's admin
// key over everything the request asks, and its age.
//
// Why the edge checks and not only the broker: on a broker without the generated ACL (or with a
// leaked downlink account) anyone could otherwise make the edge seal and send downlinks to any
// device. The key is 32 random bytes in the registry (DeviceRegistry::admin_key), which only the
// edge and the operator's `dsekp keys`/`dsekp edge send --db` can read (mode 0600).
//
//   mac = HMAC-SHA256(admin_key, "DSEKP admin downlink v1" || u8(len(prefix)) || prefix
//                     || u8(len(request_id)) || request_id || u8(len(dev_id)) || dev_id
//                     || u64(ts_ms) || u16(len(payload)) || payload)
// The topic prefix is covered, so a request for one deployment (`site1/`) cannot be replayed to
// another that shares the registry. The payload itself is never on the broker in clear: it
// travels sealed with AES-128-GCM under a key derived from the admin key (admin_auth.cpp has the
// construction), so an account that may read the admin topic, or anyone on an open broker,
// learns the device and the size of a command, not the command.
//
// A request whose ts_ms is more than kMaxRequestAgeMs from the edge's clock is stale_request:
// a captured request cannot be replayed later; within that window the edge's memory of answered
// request ids (admin_handler.hpp) answers a replay without a second downlink, except across an
// edge restart (then at most one more downlink, under a fresh seq).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "admin_protocol.hpp"

namespace dsekp::edge::admin {

using AdminKey = std::array<std::uint8_t, 32>;

inline constexpr std::uint64_t kMaxRequestAgeMs = 300'000;

/// The request's MAC as 64 lowercase hex digits ("" if OpenSSL failed or a field is too long).
[[nodiscard]] std::string request_mac(const AdminKey& key, std::string_view prefix,
                                      const DownlinkRequest& request);

/// Sets request.ts_ms = now_ms, request.mac_hex and request.sealed (the payload encrypted, see
/// the top of this file), for the edge of topic prefix `prefix`. Leaves the MAC empty (an
/// unsigned request) if OpenSSL fails.
void sign(const AdminKey& key, std::string_view prefix, DownlinkRequest& request,
          std::uint64_t now_ms);

enum class AdminVerdict : std::uint8_t { ok, unauthenticated, bad_mac, stale_request };

/// "ok", "unauthenticated" (no MAC), "bad_mac", "stale_request".
[[nodiscard]] const char* admin_verdict_name(AdminVerdict v) noexcept;

/// The edge's check: the sealed payload opened (which sets request.payload; bad_mac if it does
/// not open), the MAC in constant time, then the age. request.payload is empty (wiped) unless
/// the verdict is ok.
[[nodiscard]] AdminVerdict verify(const AdminKey& key, std::string_view prefix,
                                  DownlinkRequest& request, std::uint64_t now_ms);

}  // namespace dsekp::edge::admin
