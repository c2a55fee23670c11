// What EdgeService did with one message or downlink request: the verdict with its stable name,
// what to publish, the accepted frame's row, and what happened to the device's sessions.
//
// Publishes are returned, never sent by the service: the caller (the MQTT adapter) publishes
// them after handle() returns, which is after the state they came from was committed
// (PROTOCOL.md 6.5). A result that is not ok() has no frame, and no publishes but a REKEY
// request (a DATA frame refused as unknown_session; it changes no state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accepted_frame.hpp"
#include "dsekp/error.hpp"
#include "edge/store/session_store.hpp"
#include "edge_reason.hpp"

namespace dsekp::edge {

/// One MQTT message to publish.
struct Publish {
  std::string topic;
  std::vector<std::uint8_t> payload;
  std::uint8_t qos = 1;
};

/// Whether a DATA frame took the store's uplink fast path (edge/store/uplink_session_cache.hpp):
/// with Redis, its session keys were in this edge's cache; with SQLite, its device's state was
/// in memory, checked earlier in this batch or kept from an earlier one. `none` for a store
/// without one.
enum class CacheLookup : std::uint8_t { none, hit, miss };

struct HandleResult {
  MessageKind kind = MessageKind::unknown;
  EdgeReason reason = EdgeReason::ok;
  Error error = Error::ok;                     // why, when reason == protocol_error
  StoreStatus store_status = StoreStatus::ok;  // the store's status, when reason == store_failure
  std::string detail;                          // operator text for the *_failure reasons
  // The device the message named, once it decoded (a claim: authenticated only if ok()); empty
  // for a message that did not decode. Named in the rejection log.
  std::string dev_id;
  std::vector<Publish> publishes;             // ACK or downlink frame, to send after return
  std::optional<AcceptedFrame> frame;         // the row of an accepted DATA or PSK frame
  std::optional<std::uint32_t> downlink_seq;  // the seq of a sealed downlink frame
  // The state's next downlink seq was behind the downlink journal (the store lost writes or was
  // restored from an older copy): the seq went on from the journal's. `detail` says by how much.
  bool downlink_seq_restored = false;
  bool handshake_accepted = false;  // a new INIT: a new pending session, ACK sent
  bool ack_retransmitted = false;   // a retransmitted INIT: the same ACK again
  bool session_confirmed = false;   // this DATA frame established a pending session
  bool session_evicted = false;     // ...and evicted (or replaced) an older one
  std::uint16_t evicted_sessctr = 0;
  bool stale_state_dropped = false;  // a state of older credentials was deleted
  // Ratchet mode (PROTOCOL.md 6.6): an accepted INIT verified this many secrets past the one in
  // the state (1: a confirmation was lost; more: the state went back in time), and a
  // confirming frame stepped the device's secret.
  std::uint32_t ratchet_steps = 0;
  bool ratcheted = false;
  // Ratchet mode: the state this message saved is past the provisioned secret, which the
  // registry still holds, under these credentials' generation. Once the commit is durable the
  // daemon erases that copy (PROTOCOL.md 6.6, edge rule 1; edge/daemon/secret_eraser.hpp).
  std::optional<std::uint64_t> provisioned_secret_superseded;
  bool rekey_requested = false;  // unknown_session: a REKEY request is among the publishes
  CacheLookup cache_lookup =
      CacheLookup::none;  // a miss (or keys that did not open it): a state read
  // How many established sessions the committed state has more (or fewer) than before this
  // message: the daemon's dsekp_active_sessions gauge adds it up. Counts only if processed().
  std::int64_t established_delta = 0;

  [[nodiscard]] bool ok() const noexcept { return reason == EdgeReason::ok; }
  /// False for the transient failures (is_transient): nothing was stored, so the message was
  /// not processed and must not be treated as such (a redelivery may succeed). Every other
  /// result, rejections included, is final for these bytes.
  [[nodiscard]] bool processed() const noexcept { return !is_transient(reason); }
  /// The one stable name of the outcome: "ok", the protocol error's name (error_name(), e.g.
  /// "replay") or the edge reason's (e.g. "unknown_topic"). Never null.
  [[nodiscard]] const char* reason_name() const noexcept;
};

}  // namespace dsekp::edge
