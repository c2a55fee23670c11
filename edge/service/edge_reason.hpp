// The vocabulary of EdgeService outcomes: what kind of message was handled and why it ended the
// way it did, each with a stable snake_case name for logs and metric labels.
//
// Protocol rejections keep the core's own reason (dsekp::Error, error_name(): `replay`,
// `bad_proof`, `unknown_device`, ...); EdgeReason adds only what the core cannot know about:
// topics, configuration and the edge's storage.
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
    registry_failure,  // the device registry could not be read (not an unknown device)
    store_failure,     // the session store failed: nothing was changed
    sink_failure,      // the sink could not take the frame's row: nothing was changed
    internal_error,    // an unexpected exception (e.g. out of memory): nothing was changed
};

inline constexpr std::size_t kEdgeReasonCount =
    static_cast<std::size_t>(EdgeReason::internal_error) + 1;

/// Stable name, e.g. "store_failure". Never null.
[[nodiscard]] const char* edge_reason_name(EdgeReason r) noexcept;

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
[[nodiscard]] const char* message_kind_name(MessageKind k) noexcept;

/// The two modes of the paper's experiment, for accepted frames and their counters.
enum class FrameMode : std::uint8_t { psk, dsekp };

inline constexpr std::size_t kFrameModeCount = 2;

/// "psk" or "dsekp" (the names of the paper's log files). Never null.
[[nodiscard]] const char* frame_mode_name(FrameMode m) noexcept;

}  // namespace dsekp::edge
