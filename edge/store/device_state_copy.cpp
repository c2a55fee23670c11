// Explicit copies of device states (see device_state_copy.hpp).
#include "device_state_copy.hpp"

#include <algorithm>

namespace dsekp::edge {
namespace {

// In place: a clone() would make a temporary copy of each key, and wipe it twice.
void copy_keys(const DirectionKeys& from, DirectionKeys& to) noexcept {
  (void)to.key.assign(from.key.view());  // same size: cannot fail
  (void)to.iv_base.assign(from.iv_base.view());
}

// `session` becomes as default-constructed: a copy of an empty one, which overwrites its keys
// with zeros in place.
void clear_session(EdgeSession& session) noexcept {
  static const EdgeSession empty;
  copy_session(empty, session);
}

}  // namespace

void copy_session(const EdgeSession& from, EdgeSession& to) noexcept {
  to.sessctr = from.sessctr;
  copy_keys(from.keys.up, to.keys.up);
  copy_keys(from.keys.down, to.keys.down);
  to.uplink_window = from.uplink_window;
  to.downlink_seq = from.downlink_seq;
  to.created_ms = from.created_ms;
  to.last_seen_ms = from.last_seen_ms;
  to.serial = from.serial;
}

void copy_device_state(const EdgeDeviceState& from, EdgeDeviceState& to) noexcept {
  if (&from == &to) return;
  to.dev_id = from.dev_id;
  to.has_pending = from.has_pending;
  to.pending.init = from.pending.init;
  to.pending.edge_nonce = from.pending.edge_nonce;
  to.pending.ack_proof = from.pending.ack_proof;
  to.pending.ratchet_epoch = from.pending.ratchet_epoch;
  // Slots past established_count are never read (the core fills a slot only as it counts it,
  // the codec writes only the counted ones) and hold no keys (default, decoded, copied or
  // moved from), so only the ones `to` used past what `from` uses need emptying.
  if (from.has_pending) {
    copy_session(from.pending.session, to.pending.session);
  } else if (to.has_pending) {
    clear_session(to.pending.session);
  }
  const std::size_t used = std::min<std::size_t>(to.established_count, to.established.size());
  for (std::size_t i = 0; i < to.established.size(); ++i) {
    if (i < from.established_count) {
      copy_session(from.established[i], to.established[i]);
    } else if (i < used) {
      clear_session(to.established[i]);
    } else {
      break;
    }
  }
  to.established_count = from.established_count;
  to.has_newest_init = from.has_newest_init;
  to.newest_init_t = from.newest_init_t;
  to.next_session_serial = from.next_session_serial;
  to.seen_inits = from.seen_inits;
  to.init_bucket = from.init_bucket;
  to.compact_replies = from.compact_replies;
  to.ratchet.active = from.ratchet.active;
  to.ratchet.epoch = from.ratchet.epoch;
  (void)to.ratchet.secret.assign(from.ratchet.secret.view());
}

void clear_device_state(EdgeDeviceState& state) noexcept {
  static const EdgeDeviceState empty;
  clear_session(state.pending.session);  // also when has_pending is off: nothing stays behind
  copy_device_state(empty, state);
}

}  // namespace dsekp::edge
