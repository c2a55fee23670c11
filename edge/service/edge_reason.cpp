// Stable names of the EdgeService outcome enums (see edge_reason.hpp). No default in the
// switches: -Wswitch then flags an enumerator added without a name.
#include "edge_reason.hpp"

namespace dsekp::edge {

const char* edge_reason_name(EdgeReason r) noexcept {
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

const char* message_kind_name(MessageKind k) noexcept {
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

const char* frame_mode_name(FrameMode m) noexcept {
  switch (m) {
    case FrameMode::psk:
      return "psk";
    case FrameMode::dsekp:
      return "dsekp";
  }
  return "unknown";
}

}  // namespace dsekp::edge
