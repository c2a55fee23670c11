// The vocabulary of EdgeService outcomes: what kind of message was handled and why it ended the
// way it did, each with a stable snake_case name for logs and metric labels.
//
// Protocol rejections keep the core's own reason (dsekp::Error, error_name(): `replay`,
// `bad_proof`, `unknown_device`, ...); EdgeReason adds only what the core cannot know about:
// topics, configuration and the edge's storage. Header-only, so that the metrics (the labels of
// dsekp_rejections_total) use this one list without linking the service.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dsekp::edge {

enum class [[nodiscard]] EdgeReason : std::uint8_t{
    ok = 0,            // handled: accepted, answered or sealed (see the result's flags)
    protocol_error,    // rejected by the protocol: HandleResult::error names why
    unknown_topic,     // not one of the edge's topics
    mode_disabled,     // a topic of a mode (PSK baseline, DSEKP) this edge runs without
    retained_message,  // a retained copy the broker stored, never a frame (refused unread)
    corrupt_state,     // the device's stored state does not decode: the device is quarantined
                       // (refused until `dsekp keys reset-state`), every other device flows
    secret_erased,     // a ratcheting device whose provisioned secret the registry erased, with
                       // no stored state holding its current one (lost or reset): refused
                       // until re-provisioned (`dsekp keys rotate`, PROTOCOL.md 6.6)
    registry_failure,  // the device registry could not be read (not an unknown device)
    store_failure,     // the session store failed: nothing was changed
    sink_failure,      // the sink could not take the frame's row: nothing was changed
    internal_error,    // an unexpected exception (e.g. out of memory): nothing was changed
};

inline constexpr std::size_t kEdgeReasonCount =
    static_cast<std::size_t>(EdgeReason::internal_error) + 1;

/// Stable name, e.g. "store_failure". Never null. No default in the switch: -Wswitch then flags
/// an enumerator added without a name.
[[nodiscard]] constexpr const char* edge_reason_name(EdgeReason r) noexcept {
  switch (r) {
    case EdgeReason::ok:
      return "ok";
    case EdgeReason::protocol_error:
      return "protocol_error";
    case EdgeReason::unknown_topic:
      return "unknown_topic";
    case EdgeReason::mode_disabled:
      return "mode_disabled";
    case EdgeReason::retained_message:
      return "retained_message";
    case EdgeReason::corrupt_state:
      return "corrupt_state";
    case EdgeReason::secret_erased:
      return "secret_erased";
    case EdgeReason::registry_failure:
      return "registry_failure";
    case EdgeReason::store_failure:
      return "store_failure";
    case EdgeReason::sink_failure:
      return "sink_failure";
    case EdgeReason::internal_error:
      return "internal_error";
  }
  return "unknown";
}

/// True for the reasons that are a label of their own in dsekp_rejections_total: all but `ok`
/// (not a rejection) and `protocol_error` (counted under the core's Error name instead).
[[nodiscard]] constexpr bool is_rejection_label(EdgeReason r) noexcept {
  return r != EdgeReason::ok && r != EdgeReason::protocol_error;
}

/// True for the failures after which the message must NOT be treated as processed: nothing of
/// it was stored, and a redelivery of the same bytes is handled afresh (and may succeed).
[[nodiscard]] constexpr bool is_transient(EdgeReason r) noexcept {
  return r == EdgeReason::registry_failure || r == EdgeReason::store_failure ||
         r == EdgeReason::sink_failure || r == EdgeReason::internal_error;
}

/// What was handled: a message on one of the three uplink topics, or a downlink request.
enum class MessageKind : std::uint8_t { unknown, init, data, psk, downlink };

inline constexpr std::size_t kMessageKindCount =
    static_cast<std::size_t>(MessageKind::downlink) + 1;

/// Stable name, e.g. "init". Never null.
[[nodiscard]] constexpr const char* message_kind_name(MessageKind k) noexcept {
  switch (k) {
    case MessageKind::unknown:
      return "unknown";
    case MessageKind::init:
      return "init";
    case MessageKind::data:
      return "data";
    case MessageKind::psk:
      return "psk";
    case MessageKind::downlink:
      return "downlink";
  }
  return "unknown";
}

}  // namespace dsekp::edge
