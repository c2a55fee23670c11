// The edge's admin requests over MQTT (`dsekp edge send`): the messages and their topics.
//
// Why over MQTT and not into the database: the running daemon is the single writer of every
// device's state (PROTOCOL.md 6.5). A downlink consumes a seq (and so a nonce) of the device's
// session; if a second process sealed one, the two could pick the same seq. So the command only
// asks, and the daemon seals, commits the consumed seq, publishes, and answers.
//
//   request  on {prefix}dsekp/admin/downlink   (QoS 1)
//            {"request_id":"...","dev_id":"esp32-01","sealed_b64":"...","ts_ms":N,"mac":"..."}
//            (the payload sealed under the admin key, admin_auth.hpp; a request with the payload
//            in clear, "payload_b64", is refused as bad_request)
//   result   on {prefix}dsekp/admin/result/{request_id}   (QoS 1), or on the request's MQTT 5
//            Response Topic with its Correlation Data (below)
//            {"request_id":"...","status":"sent","ok":true,"reason":"ok","dev_id":"esp32-01",
//             "seq":3}
//   status   sent     sealed (seq) and handed to the broker while the device was online (an
//                     accepted frame within the edge's --device-offline-after): the broker
//                     delivers it unless the device drops off meanwhile; not a receipt
//            queued   the device is offline or between a rekey and its confirmation: the edge
//                     holds the request (unsealed) and sends it after the device's next accepted
//                     frame; a second result (sent, refused or expired) follows on the same topic
//            expired  held for the edge's --downlink-queue-ttl without the device coming back
//            refused  "reason" says why: unknown_device, queue_full, bad_mac, ...
//            "ok" is true exactly for sent; "seq" only then. The edge holds at most
//            kMaxQueuedPerDevice requests per device and kMaxQueued in all, in memory: a request
//            still queued when the edge stops is neither sent nor answered again.
//   Other MQTT 5 clients may ask for the result on a topic of their own: a Response Topic
//   under {prefix}dsekp/admin/result/ (anything else is refused as bad_response_topic, so a
//   request cannot make the edge publish elsewhere) and up to 64 bytes of Correlation Data,
//   which each result carries back.
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
  // In clear only in memory: set by the sender before sign(), by verify() at the edge.
  std::vector<std::uint8_t> payload;
  // The request's own authentication (admin_auth.hpp): when it was made, Unix ms, and the
  // HMAC over everything it asks, under the registry's admin key (64 hex digits).
  std::uint64_t ts_ms = 0;
  std::string mac_hex{};
  // What travels: nonce || AES-128-GCM(payload) || tag (admin_auth.hpp).
  std::vector<std::uint8_t> sealed{};
  // The sealed payload is longer than kMaxPayloadSize bytes would be (not kept): the edge
  // answers payload_too_large.
  bool payload_too_large = false;
};

enum class DownlinkStatus : std::uint8_t { sent, queued, expired, refused };

/// "sent", "queued", "expired", "refused".
[[nodiscard]] const char* downlink_status_name(DownlinkStatus s) noexcept;

/// A final status: no other result follows.
[[nodiscard]] inline bool is_final(DownlinkStatus s) noexcept {
  return s != DownlinkStatus::queued;
}

struct DownlinkResult {
  std::string request_id;
  DownlinkStatus status = DownlinkStatus::refused;
  std::string reason;  // "ok" (sent, queued), "expired", or the refusal's stable name
  std::string dev_id;
  std::optional<std::uint32_t> seq;
  [[nodiscard]] bool ok() const noexcept { return status == DownlinkStatus::sent; }
};

inline constexpr std::size_t kMaxQueuedPerDevice = 16;
inline constexpr std::size_t kMaxQueued = 4096;
inline constexpr std::size_t kMaxCorrelationData = 64;

/// `{prefix}dsekp/admin/downlink`.
[[nodiscard]] std::string request_topic(std::string_view prefix);
/// `{prefix}dsekp/admin/result/{request_id}`.
[[nodiscard]] std::string result_topic(std::string_view prefix, std::string_view request_id);

/// Whether `topic` may be a request's MQTT 5 Response Topic: {prefix}dsekp/admin/result/ and at
/// least one more character, no wildcard, at most 256 characters.
[[nodiscard]] bool valid_response_topic(std::string_view prefix, std::string_view topic) noexcept;

/// Whether `id` is a valid request id (1-64 of [A-Za-z0-9._-]: safe in a topic level).
[[nodiscard]] bool valid_request_id(std::string_view id) noexcept;

[[nodiscard]] std::string encode(const DownlinkRequest& request);
[[nodiscard]] std::string encode(const DownlinkResult& result);
/// Parse; false with `error` saying what is wrong (never throws). A request parsed that far
/// keeps its request_id even when false, so that the edge can answer "bad_request".
[[nodiscard]] bool parse(std::string_view json, DownlinkRequest& out, std::string& error);
[[nodiscard]] bool parse(std::string_view json, DownlinkResult& out, std::string& error);

}  // namespace dsekp::edge::admin
