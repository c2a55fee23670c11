// The edge's admin requests over MQTT (`dsekp edge send`): the messages and their topics.
//
// Why over MQTT and not into the database: the running daemon is the single writer of every
// device's state (PROTOCOL.md 6.5). A downlink consumes a seq (and so a nonce) of the device's
// session; if a second process sealed one, the two could pick the same seq. So the command only
// asks, and the daemon seals, commits the consumed seq, publishes, and answers.
//
//   request  on {prefix}dsekp/admin/downlink   (QoS 1)
//            {"request_id":"...","dev_id":"esp32-01","payload_b64":"...","ts_ms":N,"mac":"..."}
//   result   on {prefix}dsekp/admin/result/{request_id}   (QoS 1)
//            {"request_id":"...","ok":true,"reason":"ok","dev_id":"esp32-01","seq":3}
//            ("seq" only when ok; "reason" is the stable name: no_session, unknown_device, ...)
//
// Who may ask: the edge itself checks every request's MAC under the registry's admin key
// (admin_auth.hpp) and its age, so only a holder of the registry (`dsekp edge send --db`) can
// make the edge seal a downlink, also on a broker that lets anyone publish anything. On top,
// `dsekp keys broker-config` lets only downlink accounts publish requests.
//
// Delivery is at least once: a request redelivered after an edge crash may be sent twice, each
// time with a fresh seq (never a reused one). request_id (1-64 of [A-Za-z0-9._-]) lets the daemon
// drop a redelivered request it already answered while it runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dsekp::edge::admin {

struct DownlinkRequest {
  std::string request_id;
  std::string dev_id;
  std::vector<std::uint8_t> payload;
  // The request's own authentication (admin_auth.hpp): when it was made, Unix ms, and the
  // HMAC over everything it asks, under the registry's admin key (64 hex digits).
  std::uint64_t ts_ms = 0;
  std::string mac_hex;
  // The payload decodes to more than kMaxPayloadSize bytes (not kept): the edge answers
  // payload_too_large.
  bool payload_too_large = false;
};

struct DownlinkResult {
  std::string request_id;
  bool ok = false;
  std::string reason;  // "ok" or the refusal's stable name
  std::string dev_id;
  std::optional<std::uint32_t> seq;
};

/// `{prefix}dsekp/admin/downlink`.
[[nodiscard]] std::string request_topic(std::string_view prefix);
/// `{prefix}dsekp/admin/result/{request_id}`.
[[nodiscard]] std::string result_topic(std::string_view prefix, std::string_view request_id);

/// Whether `id` is a valid request id (1-64 of [A-Za-z0-9._-]: safe in a topic level).
[[nodiscard]] bool valid_request_id(std::string_view id) noexcept;

[[nodiscard]] std::string encode(const DownlinkRequest& request);
[[nodiscard]] std::string encode(const DownlinkResult& result);
/// Parse; false with `error` saying what is wrong (never throws). A request parsed that far
/// keeps its request_id even when false, so that the edge can answer "bad_request".
[[nodiscard]] bool parse(std::string_view json, DownlinkRequest& out, std::string& error);
[[nodiscard]] bool parse(std::string_view json, DownlinkResult& out, std::string& error);

}  // namespace dsekp::edge::admin
